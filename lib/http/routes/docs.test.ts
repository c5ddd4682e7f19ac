import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { renderDocs } from './render.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));

test('docs/openapi.json and the README route summary are what the route table generates (npm run openapi)', () => {
  for (const [file, want] of Object.entries(renderDocs(root))) {
    const have = readFileSync(`${root}${file}`, 'utf8');
    assert.ok(have === want, `${file} is stale: run npm run openapi`);
  }
});

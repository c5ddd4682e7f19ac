import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERROR_CODES } from '../errors.ts';
import { renderErrorsDoc } from './errors-doc.ts';

test('docs/errors.md is what `npm run errors-doc` makes of the catalogue', () => {
  const checkedIn = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  assert.equal(checkedIn, renderErrorsDoc(), 'docs/errors.md is stale: run `npm run errors-doc`');
});

test('the page lists every code with its status', () => {
  const page = renderErrorsDoc();
  for (const code of Object.keys(ERROR_CODES)) assert.match(page, new RegExp(`^\\| \`${code}\` \\| \\d{3}`, 'm'), code);
  assert.match(page, /^\| `upload_incomplete` \| 400 or 409 \| invalid \/ conflict \|/m);
  assert.match(page, /^\| `export_busy` \| 429 \| busy \|/m);
});

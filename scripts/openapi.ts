/**
 * Writes docs/openapi.json and the README's route summary from the route table
 * (lib/http/routes). `npm run openapi` after changing a route; a test fails while either is stale.
 * @module
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderDocs } from '../lib/http/routes/render.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = renderDocs(root);
for (const [file, text] of Object.entries(out)) {
  const path = `${root}${file}`;
  let old: string | undefined;
  try {
    old = readFileSync(path, 'utf8');
  } catch {}
  if (old === text) continue;
  writeFileSync(path, text);
  console.log(`wrote ${file}`);
}

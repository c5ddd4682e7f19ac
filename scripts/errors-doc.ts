/**
 * Writes docs/errors.md from the error catalogue and its map to HTTP (lib/http/errors-doc.ts).
 * Run it after adding or changing a code: `npm run errors-doc`.
 * @module
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderErrorsDoc } from '../lib/http/errors-doc.ts';

const out = fileURLToPath(new URL('../docs/errors.md', import.meta.url));
writeFileSync(out, renderErrorsDoc());
console.log(`wrote ${out}`);

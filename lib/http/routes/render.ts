/**
 * The files generated from the route table, as they should read now: docs/openapi.json and
 * README.md with its route summary. Shared by `npm run openapi` (which writes them) and the
 * freshness test (which compares).
 * @module
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDocument } from './openapi.ts';
import { SCHEMAS } from './schemas.ts';
import { routeSummary, withSummary } from './summary.ts';
import { ROUTE_PROSE, ROUTES } from './table.ts';

export const OPENAPI_FILE = 'docs/openapi.json';
export const README_FILE = 'README.md';

/** File (relative to the repository root) → its generated text. */
export function renderDocs(root: string): Record<string, string> {
  const tables = { routes: ROUTES, schemas: SCHEMAS, prose: ROUTE_PROSE };
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  return {
    [OPENAPI_FILE]: JSON.stringify(buildDocument(tables, version), null, 2) + '\n',
    [README_FILE]: withSummary(readFileSync(join(root, README_FILE), 'utf8'), routeSummary(tables)),
  };
}

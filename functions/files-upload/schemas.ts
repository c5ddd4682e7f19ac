/**
 * The zod schemas of files-upload's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { digestHeaders, onlyTrue, PARENTS, pathQuery, preferHeader, rawFile, sha256Hex, statusOf } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import type { routes } from './routes.ts';

export const schemas = {
  'files.upload': {
    query: z.extend(pathQuery, { overwrite: onlyTrue('replace an existing file'), parents: onlyTrue(PARENTS) }),
    body: { raw: { ...rawFile, description: 'the whole file, at most 64 MiB' } },
    requestHeaders: { ...digestHeaders, ...preferHeader },
    responses: { 200: { description: 'placed', json: statusOf('uploaded', { sha256: sha256Hex, size: z.number() }) } },
  },
} as const satisfies SchemaTable<typeof routes>;

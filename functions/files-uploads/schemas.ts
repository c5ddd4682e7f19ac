/**
 * The zod schemas of files-uploads's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { digestHeaders, onlyTrue, opLocationHeader, opViewSchema, PARENTS, pathQuery, preferHeader, rawFile, sha256Hex, wholeCount, wholeNumberText } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

/** An upload session as its receiver answers it (job/upload/session.ts), passed through. */
const uploadViewSchema = z.object({
  id: z.string(),
  path: z.string(),
  size: wholeCount,
  received: wholeCount,
  part_max_bytes: wholeCount,
  parts: z.array(z.object({ size: wholeCount, sha256: z.string() })),
});

export const schemas = {
  'uploads.begin': {
    query: z.extend(pathQuery, { parents: onlyTrue(PARENTS) }),
    body: { json: z.strictObject({ size: z.number().check(z.int()).check(z.nonnegative()).check(z.lte(Number.MAX_SAFE_INTEGER)) }) },
    requestHeaders: preferHeader,
    responses: { 201: { description: 'the session', json: uploadViewSchema } },
  },
  'uploads.get': { responses: { 200: { description: 'the session', json: uploadViewSchema } } },
  'uploads.part': {
    query: z.object({
      offset: described(wholeNumberText(/^\d{1,16}$/, 0, Number.MAX_SAFE_INTEGER, 'the ?offset= query parameter must be a byte count'), 'where the part starts: the bytes received so far'),
    }),
    body: { raw: { ...rawFile, description: 'one part, at most 32 MiB' } },
    requestHeaders: digestHeaders,
    responses: { 200: { description: 'the session', json: uploadViewSchema } },
  },
  'uploads.cancel': { responses: { 204: { description: 'cancelled', empty: true } } },
  'uploads.commit': {
    body: { json: z.strictObject({ overwrite: z.optional(z.boolean()), sha256: z.optional(z.string().check(z.regex(/^[0-9a-f]{64}$/))) }) },
    responses: { 202: { description: 'placed: the upload as the ops listing shows it', json: z.strictObject({ op: opViewSchema, sha256: sha256Hex }), headers: opLocationHeader } },
  },
} as const satisfies SchemaTable<typeof routes>;

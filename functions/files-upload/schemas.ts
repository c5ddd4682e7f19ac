/**
 * The zod schemas of files-upload's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { digestHeaders, onlyTrue, PARENTS, pathQuery, preferHeader, rawFile, sha256Hex, statusOf, wholeCount } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

const placed = z.strictObject({ path: z.string(), sha256: sha256Hex, size: wholeCount });

export const schemas = {
  'files.upload': {
    query: z.extend(pathQuery, { overwrite: onlyTrue('replace an existing file'), parents: onlyTrue(PARENTS) }),
    body: { raw: { ...rawFile, description: 'the whole file, at most 64 MiB' } },
    requestHeaders: { ...digestHeaders, ...preferHeader },
    responses: { 200: { description: 'placed', json: statusOf('uploaded', { sha256: sha256Hex, size: wholeCount }) } },
  },
  'files.upload_url': {
    query: z.extend(pathQuery, { overwrite: onlyTrue('replace existing files'), parents: onlyTrue(PARENTS) }),
    responses: {
      200: {
        description: 'a signed URL, valid 10 min (FELIS_UPLOAD_URL_SECONDS, at most 15 min), for one upload',
        json: z.strictObject({
          url: described(
            z.string(),
            'PUT a raw body to it (into `path`, a file) or POST multipart/form-data `files` parts (into `path`, a folder); origin-relative unless FELIS_DOWNLOAD_BASE_URL is set',
          ),
          expires_at: described(z.string(), 'RFC 3339, whole seconds'),
          max_bytes: described(wholeCount, 'the most bytes the one request may carry (a form: its framing included)'),
        }),
      },
    },
  },
  'uploads.put': {
    body: { raw: { ...rawFile, description: 'the whole file, at most `max_bytes`' } },
    requestHeaders: {
      'Content-Length': digestHeaders['Content-Length'],
      'Content-Digest': { description: "optional: the body's SHA-256 (`sha-256=:<base64>:`), checked when given; else computed and answered" },
    },
    responses: { 200: { description: 'placed', json: statusOf('uploaded', { sha256: sha256Hex, size: wholeCount }) } },
  },
  'uploads.post': {
    body: { raw: { contentTypes: ['multipart/form-data'], description: 'one or more parts named `files`, each with a file name (no `/`); nothing else' } },
    requestHeaders: { 'Content-Length': digestHeaders['Content-Length'] },
    responses: { 200: { description: 'every part placed', json: statusOf('uploaded', { files: z.array(placed) }) } },
  },
} as const satisfies SchemaTable<typeof routes>;

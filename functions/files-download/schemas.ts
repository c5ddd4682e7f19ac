/**
 * The zod schemas of files-download's routes (routes.ts): query, body and each success answer (why
 * apart from routes.ts: lib/http/routes/common-entries.ts).
 * @module
 */
import { onlyTrue, pathQuery } from '../../lib/http/routes/common-schemas.ts';
import type { SchemaTable } from '../../lib/http/routes/types.ts';
import * as z from '../../lib/schema.ts';
import { described } from '../../lib/schema.ts';
import type { routes } from './routes.ts';

const WORLD_STATE_HEADER = {
  description:
    '`stopped`, or `running`: the server was running, starting or still stopping when the download was admitted, so a file may have been caught mid-save (a region file with a chunk half written); see docs/routes.md',
  required: true,
};

export const schemas = {
  'files.download': {
    query: z.extend(pathQuery, { dir: onlyTrue('the folder as a zip') }),
    responses: {
      200: {
        description: 'a signed URL, valid 10 min',
        json: z.strictObject({
          url: described(z.string(), 'origin-relative unless FELIS_DOWNLOAD_BASE_URL is set'),
          filename: z.string(),
          expires_at: described(z.string(), 'RFC 3339, whole seconds'),
        }),
      },
    },
  },
  'exports.download': {
    responses: {
      200: {
        description: 'the file, or the folder as a zip, streamed',
        raw: { contentTypes: ['application/octet-stream', 'application/zip'], description: 'a file (application/octet-stream, with Content-Length) or a folder as a zip stream' },
        headers: {
          'Content-Disposition': { description: 'attachment, with the file name' },
          'X-Content-Type-Options': { description: 'nosniff' },
          'Cache-Control': { description: 'no-store' },
          'Accept-Ranges': { description: '`bytes` for a file, `none` for a folder (a zip stream is not resumable)' },
          ETag: { description: "a file's strong ETag (its identity, size, mtime and ctime); send it as `If-Range` to resume" },
          'X-Felis-World-State': WORLD_STATE_HEADER,
        },
      },
      206: {
        description: 'a file only: the one range asked for by `Range` (and `If-Range` still matching the ETag)',
        raw: { contentTypes: ['application/octet-stream'], description: 'the bytes of the range, with Content-Length' },
        headers: {
          'Content-Range': { description: '`bytes <first>-<last>/<size>`' },
          'Content-Disposition': { description: 'attachment, with the file name' },
          'Accept-Ranges': { description: 'bytes' },
          ETag: { description: "the file's strong ETag" },
          'X-Felis-World-State': WORLD_STATE_HEADER,
        },
      },
    },
  },
} as const satisfies SchemaTable<typeof routes>;

/**
 * files-download's routes (files.download, exports.download): their table entries and prose (what a declaration holds,
 * and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { BESIDE_GAME, filesGet, GATES, JOB, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-download', {
  'files.download': {
    method: 'POST',
    path: `${S}/files/download`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, [503, 'export_unavailable']],
  },
  'exports.download': {
    method: 'GET',
    path: '/api/v1/exports/:ticket/download',
    // A signed, expiring download URL: its signature is the credential.
    permission: { kind: 'public' },
    errors: [
      ...GATES,
      ...BESIDE_GAME,
      ...JOB,
      [405, 'method_not_allowed'],
      [410, 'export_expired'],
      [413, 'too_large'],
      [416, 'range_not_satisfiable'],
      [429, 'export_busy'],
      [503, 'export_unavailable'],
      [504, 'export_timeout'],
    ],
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.download': {
    summary: 'Sign a download URL for a file, or a folder as a zip. No Job yet.',
    answer: '`{url, filename, expires_at}` — a signed URL valid 10 min; the world root is `bad_path`, and so is a folder signed without `dir=true` (a browse session is asked)',
  },
  'exports.download': {
    summary: 'The signed URL: the file, or the folder as a zip stream. No bearer: the signature is the credential.',
    answer:
      'the file (`Content-Length`, `ETag`, `Accept-Ranges: bytes`; `Range` / `If-Range` give 206 with `Content-Range`, 416 `range_not_satisfiable` past the end), or the folder as a zip stream (`Accept-Ranges: none`), with `Content-Disposition: attachment`, `nosniff`, `no-store`, `X-Felis-World-State: stopped|running` (`running`: read beside the game, a file may be mid-save); an export Job holds the world as `export` while it streams (docs/downloads.md)',
  },
} satisfies ProseTable<typeof routes>;

/**
 * Downloads of a file, or of a folder as a zip:
 *
 * - `POST /api/v1/servers/:name/files/download?path=&dir=true|false` (bearer, `get files`): the
 *   gates (exists, stopped or a read beside the game, world volume), then a signed, expiring URL on this API that a browser
 *   opens without a bearer header. Nothing is stored and no Job starts for it; without `dir=true`
 *   a browse session is asked whether the path is a folder (400 if so, rather than a URL whose
 *   download fails).
 * - `GET /api/v1/exports/:ticket/download` (the signature is the credential): the ticket checked,
 *   the gates again, the `export` admission around the export Job's creation, then the Pod's
 *   answer streamed through with the download headers (`X-Felis-World-State`: `stopped` or
 *   `running`, as the admission found the server). A file's `Range` / `If-Range` go to the
 *   Pod, which decides (200 whole, 206 part, 416); a folder's zip stream is `Accept-Ranges: none`. The caller going away ends the Pod's work.
 */

import http from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { actorOf, asActor, BEARER, currentActor } from '../../lib/actor.ts';
import { contentDisposition, downloadFilename } from '../../lib/downloads/disposition.ts';
import type { Downloads } from '../../lib/downloads/downloads.ts';
import { ExportPodError, ExportTimeoutError } from '../../lib/downloads/pod.ts';
import { refusalError } from '../../lib/downloads/refusal.ts';
import { DomainError } from '../../lib/errors.ts';
import { audit } from '../../lib/http/audit.ts';
import type { Deps } from '../../lib/http/deps.ts';
import { sendError, sendJson } from '../../lib/http/envelope.ts';
import { requireEditor } from '../../lib/http/file-call.ts';
import { queryPath, rootRefusal, sentQueryPath, serverName } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { ROUTES } from '../../lib/http/routes/table.ts';
import type { Target } from '../../lib/job-spec/types.ts';
import { CONTENT_RANGE_SHAPE, ETAG_SHAPE, rangeAsk } from '../../lib/protocol/range.ts';
import { parseResultPayload } from '../../lib/protocol/result-parse.ts';
import { isRootPath, pathRefusal } from '../../lib/protocol/world-path.ts';
import { sleep } from '../../lib/sleep.ts';

/** A header of the Pod's answer, relayed only when it has the expected shape. */
function relayed(res: http.IncomingMessage, name: string, shape: RegExp): string | undefined {
  const v = res.headers[name];
  return typeof v === 'string' && shape.test(v) ? v : undefined;
}

export const DOWNLOAD_ROUTE = ROUTES['exports.download'].path;

/** Says whether the world was stopped or running when the download was admitted. */
export const WORLD_STATE_HEADER = 'x-felis-world-state';

/**
 * Tells @hono/node-server that the answer was written to the Node response directly. Made per
 * request (the request-id middleware sets a header on it). Once the adapter listens, the global
 * Response is its lightweight one, which writes a null-body answer from a cache, headers again
 * included; reading `body` drops that cache, so only the marker header is looked at.
 */
function alreadySent(): Response {
  const r = new Response(null, { headers: { 'x-hono-already-sent': 'true' } });
  void r.body;
  return r;
}

function requireDownloads(deps: Deps): Downloads {
  if (!deps.downloads) throw new DomainError('export_unavailable', 'unavailable', 'downloads are not configured (no job key)');
  return deps.downloads;
}

/**
 * How long signing waits for a browse session to say what the path is. On a cold server the first
 * ask starts a session and gets no answer within the session start budget; asked again, the
 * session that is starting answers once it is up (seconds), so a folder is not signed as a file.
 */
export const KIND_WAIT_MS = 5_000;
/** Between two asks while a session starts. */
const KIND_RETRY_MS = 250;

/**
 * Whether `path` is a folder (or a link to one inside the world) as a browse session sees it: a
 * listing of the path itself of one entry, starting a session as a listing does when none serves
 * (the browse Job lists and reads share; no one-shot Job, so no verb the function lacks:
 * `jobs create`, `pods list`), asked again until KIND_WAIT_MS while none answers.
 * False when none answers by then or the path is anything else: the export Job then decides when
 * the URL is opened, as it always did.
 */
async function isFolder(deps: Deps, target: Target, path: string, signal: AbortSignal): Promise<boolean> {
  if (!deps.browse) return false;
  const end = performance.now() + KIND_WAIT_MS;
  for (;;) {
    const payload = await deps.browse.run(target, 'list', path, signal, undefined, { limit: 1 }).catch(() => undefined);
    if (payload !== undefined) {
      try {
        return parseResultPayload(payload).code === undefined;
      } catch {
        return false;
      }
    }
    if (performance.now() + KIND_RETRY_MS >= end) return false;
    await sleep(KIND_RETRY_MS, signal);
  }
}

/**
 * The signed URL's origin: `FELIS_DOWNLOAD_BASE_URL`, or none (an origin-relative URL the panel
 * resolves against the API it called). Never the request's Host: a caller could name any origin,
 * and a link to it would carry a valid ticket there.
 */
function origin(deps: Deps): string {
  return deps.downloads?.config.baseUrl ?? '';
}

/** Tickets signed before the signer was recorded are audited under this name. */
export const UNRECORDED_SIGNER = 'unrecorded';

export const filesDownload = defineFunction('files-download', (deps) => ({
  'files.download': async (c, input) => {
    const server = serverName(c);
    const path = queryPath(c, false);
    const target = await deps.gates.enter(server, { op: 'read', path });
    requireEditor(deps);
    if (path === '') throw rootRefusal(sentQueryPath(c));
    // Read once the path is known to be there (the schema asks for it); ?path= was decoded above, in Felis's order.
    const { dir } = input.query();
    if (isRootPath(path))
      throw new DomainError('bad_path', 'invalid', pathRefusal(sentQueryPath(c), 'names the whole world, which cannot be downloaded at once; sign each of its folders with dir=true'));
    const downloads = requireDownloads(deps);
    if (!dir && (await isFolder(deps, target, path, c.req.raw.signal))) {
      throw new DomainError('bad_path', 'invalid', `${path.replace(/\/+$/, '')} is a folder; sign it with dir=true`);
    }
    const { ticket, expiresAt } = downloads.sign(server, path, dir, (currentActor() ?? BEARER).name);
    const filename = downloadFilename(path, dir);
    audit(deps.logger, c.get('requestId'), 'file.download', server, path, { dir });
    return sendJson(c, 200, { url: `${origin(deps)}/api/v1/exports/${ticket}/download`, filename, expires_at: expiresAt.toISOString().replace(/\.\d{3}Z$/, 'Z') });
  },

  'exports.download': async (c) => {
    // A HEAD (link previews, scanners) must not start a Job.
    if (c.req.method !== 'GET') return sendError(c, 405, 'method_not_allowed', 'only GET downloads');
    const downloads = requireDownloads(deps);
    const claims = downloads.verify(c.req.param('ticket') ?? '');
    const target = await deps.gates.enter(claims.server, { op: 'read', path: claims.path });
    requireEditor(deps);
    const signal = c.req.raw.signal;
    let opened;
    try {
      // A folder's zip is never the same bytes twice: its Range is not forwarded (the Pod ignores it too).
      const ask = claims.dir ? {} : rangeAsk(c.req.header('range'), c.req.header('if-range'));
      opened = await downloads.open(target, claims, signal, ask);
    } catch (err) {
      if (err instanceof ExportTimeoutError) {
        deps.logger.error({ request_id: c.get('requestId'), err: err.message }, 'export pod did not serve in time');
        throw new DomainError('export_timeout', 'timeout', 'the download did not start in time; retry shortly');
      }
      if (err instanceof ExportPodError) deps.logger.error({ request_id: c.get('requestId'), err: err.message }, 'export pod failed');
      throw err;
    }
    const res = opened.response;
    const status = res.statusCode ?? 0;
    const contentRange = relayed(res, 'content-range', CONTENT_RANGE_SHAPE);
    const etag = relayed(res, 'etag', ETAG_SHAPE);
    if (status === 416 && !claims.dir) {
      res.resume();
      const size = /\/(\d+)$/.exec(contentRange ?? '')?.[1];
      const r = sendError(c, 416, 'range_not_satisfiable', `the range asked for is not within the file${size === undefined ? '' : ` of ${size} bytes`}`);
      if (contentRange) r.headers.set('content-range', contentRange);
      if (etag) r.headers.set('etag', etag);
      r.headers.set('accept-ranges', 'bytes');
      return r;
    }
    if (status !== 200 && !(status === 206 && !claims.dir && contentRange)) throw await refusalError(res, opened.job);
    deps.logger.info({ request_id: c.get('requestId'), server: claims.server, path: claims.path, dir: claims.dir, job: opened.job }, 'download streaming');
    // No bearer here: the download acts for whoever signed its URL, and is audited as theirs.
    asActor(actorOf(claims.signer ?? UNRECORDED_SIGNER), () =>
      audit(deps.logger, c.get('requestId'), 'file.download.open', claims.server, claims.path, { dir: claims.dir, job: opened.job, ...(status === 206 ? { range: contentRange } : {}) }),
    );
    const headers = new Headers({
      'content-type': claims.dir ? 'application/zip' : 'application/octet-stream',
      'content-disposition': contentDisposition(downloadFilename(claims.path, claims.dir)),
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
      // `running`: the game may have been saving while this was read (docs/routes.md, Reads while the server runs).
      [WORLD_STATE_HEADER]: opened.worldState,
    });
    const len = res.headers['content-length'];
    if (typeof len === 'string' && /^\d+$/.test(len)) headers.set('content-length', len);
    // A file answers ranges (its ETag, and a part's Content-Range); a folder's zip stream does not.
    if (claims.dir) headers.set('accept-ranges', 'none');
    else {
      headers.set('accept-ranges', 'bytes');
      if (etag) headers.set('etag', etag);
      if (status === 206 && contentRange) headers.set('content-range', contentRange);
    }
    headers.set('x-request-id', c.get('requestId'));
    // On Node's server, the Pod's socket is piped straight into the caller's: back-pressure end to
    // end, and no web-stream layer between them (it cost most of the throughput). The caller going
    // away destroys the Pod's response, which ends the Pod's work.
    const outgoing = (c.env as { outgoing?: unknown } | undefined)?.outgoing;
    if (outgoing instanceof http.ServerResponse) {
      // Set one by one rather than passed to writeHead, so the response keeps them (getHeaders()).
      for (const [k, v] of headers) outgoing.setHeader(k, v);
      outgoing.writeHead(status);
      await pipeline(res, outgoing).catch((err) => {
        deps.logger.info({ request_id: c.get('requestId'), job: opened.job, err: String(err) }, 'download ended early');
      });
      return alreadySent();
    }
    return new Response(Readable.toWeb(res) as ReadableStream, { status, headers });
  },
}));

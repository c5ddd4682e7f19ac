/**
 * The receiver mode of the file Job: an HTTP server on the Pod's own address that takes an upload's
 * bytes straight from the function (no staging anywhere else) and lands them in the world, which
 * it mounts read-write and holds (labelled as an `upload` file Job) while it runs.
 *
 * Wire (every request needs `Authorization: Bearer <token>`, checked first; 401 otherwise):
 * - `GET /ready` → 200 `{}`: the function asks this before it sends a body it cannot send twice.
 * - `PUT /upload?path=&size=&sha256=&overwrite=true&parents=true` with exactly `size` bytes (`sha256`
 *   may be left out: the digest is then computed and answered, not checked; `Content-Length`
 *   required and equal to `size`, else 411/400 before a byte is read): 200 with the Result JSON
 *   (`{"sha256"}` once placed, or an op refusal with its `code`: `exists`, `bad_path`, `no_space`,
 *   …); 422 `{"transfer":"short"|"long"|"digest"|"broken","error"}` when the bytes were not what
 *   was promised (nothing changed, no working file left); 409 while another upload runs.
 *   `parents=true` makes the missing folders of `path` first, each as mkdir would.
 * - `POST /form?path=<folder>&overwrite=true&parents=true` with a `multipart/form-data` body of
 *   `Content-Length` bytes: each `files` part landed at `<folder>/<its file name>` in turn
 *   (job/upload/form.ts); 200 `{"files":[{path,sha256,size}],"refused"?:{code,error},
 *   "transfer"?:{reason,error}}`: what was placed, and what stopped it early if anything did.
 *
 * In `once` mode (the single PUT) it stops after its first upload, whatever the outcome, so the
 * Job ends and stops holding the world. It also stops after an idle period, its lifetime, or a
 * signal. Bounds: one upload at a time, few connections, slow headers and idle sockets time out.
 *
 * @module
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Result } from '../../lib/protocol/result.ts';
import { errorBody, resultBody, send } from '../http/answer.ts';
import type { StopReason } from '../http/lifecycle.ts';
import { PodServer, whenAnswered } from '../http/listen.ts';
import { type FormLanding, formResult, landForm } from '../upload/form.ts';
import type { Landing, UploadRequest } from '../upload/land.ts';

export interface ReceiveOptions {
  host: string;
  port: number;
  tokenSha256: string;
  /** Lands one upload; production: `landUpload` over a fresh context of the world root. */
  land: (req: UploadRequest, body: AsyncIterable<Buffer>) => Promise<Landing>;
  idleMs: number;
  lifetimeMs: number;
  /** Stop after the first upload (the single PUT's Job, a signed URL's). */
  once?: boolean;
  /** A socket that sends nothing for this long is closed (a stalled upload ends, and is undone). */
  socketIdleMs?: number;
  maxConnections?: number;
}

export interface Receiving {
  address: AddressInfo;
  /** The first upload's landing, if any (in `once` mode: the one the Job reports). */
  stopped: Promise<{ reason: StopReason | 'done'; landings: number; first?: Landing }>;
  stop(reason?: StopReason): void;
}

const HEX64 = /^[0-9a-f]{64}$/;
const SIZE = /^(0|[1-9]\d{0,15})$/;

/** The Result as the result line carries it; a transfer error as its own small JSON. */
export function landingAnswer(l: Landing): { status: number; body: string } {
  if (l.kind === 'result') return { status: 200, body: resultBody(l.result) };
  return { status: 422, body: JSON.stringify({ transfer: l.reason, error: l.message }) };
}

function parseUpload(url: URL, contentLength: string | undefined): UploadRequest | { status: number; error: string } {
  const path = url.searchParams.get('path');
  const size = url.searchParams.get('size') ?? '';
  const sha256 = url.searchParams.get('sha256') ?? '';
  if (path === null || path === '') return { status: 400, error: 'path is required' };
  if (!SIZE.test(size) || !Number.isSafeInteger(Number(size))) return { status: 400, error: 'size must be a whole number of bytes' };
  // No digest (a signed URL's PUT: a browser cannot cheaply hash a large file): computed, not checked.
  if (sha256 !== '' && !HEX64.test(sha256)) return { status: 400, error: 'sha256 must be 64 lowercase hex characters' };
  if (contentLength === undefined) return { status: 411, error: 'Content-Length is required' };
  if (contentLength !== size) return { status: 400, error: 'Content-Length must equal size' };
  const req: UploadRequest = { path, size: Number(size), ...(sha256 ? { sha256 } : {}), overwrite: url.searchParams.get('overwrite') === 'true' };
  if (url.searchParams.get('parents') === 'true') req.parents = true;
  return req;
}

export async function startReceiving(o: ReceiveOptions): Promise<Receiving> {
  let busy = false;
  let landings = 0;
  let first: Landing | undefined;
  // A body may take minutes; its pace is bounded by the socket idle timeout instead.
  // An upload in flight at the stop is cut off (and undone) after the grace, not kept past it.
  const pod = new PodServer<'done'>({
    tokenSha256: o.tokenSha256,
    requestTimeoutMs: 0,
    maxConnections: o.maxConnections ?? 16,
    socketIdleMs: o.socketIdleMs ?? 30_000,
    life: { idleMs: o.idleMs, lifetimeMs: o.lifetimeMs, graceMs: 2_000 },
  });
  const { life } = pod;
  const stop = (reason?: StopReason | 'done') => life.stop(reason);

  pod.route('GET', '/ready', (req, res) => {
    req.resume();
    if (!busy) life.armIdle();
    send(res, 200, '{}');
  });

  pod.route('PUT', '/upload', async (req, res, url) => {
    const parsed = parseUpload(url, req.headers['content-length']);
    if ('error' in parsed) {
      res.setHeader('connection', 'close');
      req.resume();
      return send(res, parsed.status, errorBody(parsed.error));
    }
    if (busy || life.stopping) {
      res.setHeader('connection', 'close');
      req.resume();
      return send(res, 409, '{"error":"busy"}');
    }
    busy = true;
    life.holdIdle();
    let landing: Landing;
    try {
      landing = await o.land(parsed, req);
    } catch (e) {
      // An infrastructure failure (the root cannot be opened) is neither; report it as a 500.
      busy = false;
      landings++;
      if (!req.complete) res.setHeader('connection', 'close');
      send(res, 500, errorBody(e));
      after(res);
      return;
    }
    busy = false;
    landings++;
    first ??= landing;
    const a = landingAnswer(landing);
    // A refused upload's unread rest is read and dropped, never left unread under a close: that
    // close would reset the connection and could lose this answer. The caller closes once answered.
    if (!req.complete) req.resume();
    if (!res.destroyed) send(res, a.status, a.body);
    after(res);
  });

  pod.route('POST', '/form', async (req, res, url) => {
    const folder = url.searchParams.get('path');
    const declared = req.headers['content-length'];
    const refusal =
      folder === null
        ? { status: 400, error: 'path is required' }
        : declared === undefined || !SIZE.test(declared) || !Number.isSafeInteger(Number(declared))
          ? { status: 411, error: 'Content-Length is required' }
          : busy || life.stopping
            ? { status: 409, error: 'busy' }
            : undefined;
    if (refusal || folder === null || declared === undefined) {
      res.setHeader('connection', 'close');
      req.resume();
      return send(res, refusal?.status ?? 400, refusal?.error === 'busy' ? '{"error":"busy"}' : errorBody(refusal?.error ?? 'bad request'));
    }
    busy = true;
    life.holdIdle();
    let form: FormLanding;
    try {
      form = await landForm(
        o.land,
        { folder, size: Number(declared), overwrite: url.searchParams.get('overwrite') === 'true', ...(url.searchParams.get('parents') === 'true' ? { parents: true } : {}) },
        req.headers,
        req,
      );
    } catch (e) {
      busy = false;
      landings++;
      if (!req.complete) res.setHeader('connection', 'close');
      send(res, 500, errorBody(e));
      after(res);
      return;
    }
    busy = false;
    landings++;
    const r = formResult(form);
    first ??= r ? { kind: 'result', result: r } : { kind: 'transfer', reason: form.transfer?.reason ?? 'broken', message: form.transfer?.error ?? 'the form broke off' };
    // As for /upload: the unread rest of a form stopped early is read and dropped, never cut.
    if (!req.complete) req.resume();
    if (!res.destroyed) send(res, 200, JSON.stringify(form));
    after(res);
  });

  /** Once the answer is out: stop (once mode) or restart the idle clock. */
  function after(res: http.ServerResponse): void {
    if (!o.once) return life.armIdle();
    whenAnswered(res, () => stop('done'));
  }

  const stopped = pod.stopped.then((reason) => ({ reason, landings, ...(first ? { first } : {}) }));
  const address = await pod.listen(o.port, o.host);
  life.armIdle();
  return { address, stopped, stop };
}

/** What a Result-less stop prints: the Job served nothing that changed the world. */
export const NOTHING: Result = {};

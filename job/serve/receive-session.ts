/**
 * The session mode of the receiver: one Job per upload session, serving that session's calls on
 * its Pod address until the session ends (committed, cancelled, or idle). The session itself is on
 * the disk (job/upload/session.ts), so a new receiver for the same id carries on where a lost one
 * stopped.
 *
 * It holds nothing by itself (its Job is labelled as one that only reads): it changes the world
 * only inside a writing call (begin, part, commit, cancel), which a function sends while it holds a
 * ticket of the world's line and which carries that lock (lib/protocol/session-lock.ts); a writing
 * call without a lock that holds now is refused before anything is read or changed (409
 * `maintenance_in_progress`), as an edit session refuses one. Between calls other changes of the
 * world run.
 *
 * Wire (token first, 401 otherwise): `GET /ready`; `POST /begin?path=&size=&parents=true` → 201 view (200 when
 * it already exists: a retried begin); `GET /session` → view; `PUT /part?offset=&size=&sha256=` with
 * exactly `size` bytes → view; `DELETE /session` → 204; `POST /commit?overwrite=true&sha256=` → the
 * Result (`{sha256}`, or an op refusal such as `exists`). A refusal is `{code, error}` with the
 * status the function passes on (404 upload_not_found, 409 upload_busy / upload_offset_mismatch /
 * upload_incomplete / maintenance_in_progress, 413 part_too_large, 400 upload_incomplete /
 * digest_mismatch, 507 upload_staging_full).
 *
 * It stops after a commit or a cancel, and when idle: then the staging folder is removed, so an
 * abandoned session leaves nothing. Its idle period runs from the session's last begin or accepted
 * part (the `touched` its state records), the very time a sweep judges the session by
 * (session.ts `sweepStaleSessions`): status calls and refused calls do not keep it alive past that,
 * so no sweep ever removes the folder of a session whose receiver still serves it. A stop at its
 * lifetime or on a signal keeps the folder for the next receiver. At start it removes other
 * sessions' folders left stale by killed receivers (it starts inside the call of a function holding
 * the world's line, which waits for it to serve).
 *
 * The receiver is a background upload op in the ops listing, so how it stopped is its Result: the
 * commit's (`{sha256, files: 1, bytes}`), or a code saying why nothing was placed (see `endedWith`).
 * `progress` hears the bytes received: at start for a session resumed from the disk, and after the
 * begin and every part, before the call is answered (the ops listing reads them as the op's `done`,
 * so a caller that has the answer finds the op counting its bytes).
 *
 * @module
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Result } from '../../lib/protocol/result.ts';
import { SESSION_LOCK_HEADER, sessionLockHolds } from '../../lib/protocol/session-lock.ts';
import { resultBody, send } from '../http/answer.ts';
import type { StopReason } from '../http/lifecycle.ts';
import { PodServer, whenAnswered } from '../http/listen.ts';
import type { Handler } from '../http/router.ts';
import type { OpContext } from '../runtime/types.ts';
import { TransferError } from '../upload/land.ts';
import { SessionError, stagingName, sweepStaleSessions, TAMPERED, UploadSession, viewOf } from '../upload/session.ts';
import { bestEffort } from '../volume/failure.ts';

export interface SessionReceiveOptions {
  host: string;
  port: number;
  tokenSha256: string;
  /** The session this receiver serves (32 hex). */
  id: string;
  /** Opens a context over the world root for one call (closed after it). */
  context: () => OpContext;
  idleMs: number;
  lifetimeMs: number;
  socketIdleMs?: number;
  progress?: (received: number, size: number) => void;
  /** The clock the lock a call carries is judged by (tests). */
  now?: () => number;
}

export type SessionStop = StopReason | 'committed' | 'cancelled' | 'gone';

export interface SessionReceiving {
  address: AddressInfo;
  stopped: Promise<{ reason: SessionStop; result: Result }>;
  stop(reason?: StopReason): void;
}

const HEX64 = /^[0-9a-f]{64}$/;
const NO_LOCK = 'this call to the upload session carries no world lock that holds now (it came too late, or not from a function holding the world); nothing was changed: retry it';
const COUNT = /^(0|[1-9]\d{0,15})$/;

/** A tampered staging folder ends the session: its Result is the refusal. */
function endsSessionWith(set: (e: SessionError) => void) {
  return (e: SessionError): SessionStop | undefined => {
    if (e.code !== TAMPERED) return undefined;
    set(e);
    return 'gone';
  };
}

const refusal = (res: http.ServerResponse, status: number, code: string, error: string) => send(res, status, JSON.stringify({ code, error }));

function count(v: string | null): number | undefined {
  return v !== null && COUNT.test(v) && Number.isSafeInteger(Number(v)) ? Number(v) : undefined;
}

const TRANSFER: Record<TransferError['reason'], [number, string]> = {
  short: [400, 'upload_incomplete'],
  broken: [400, 'upload_incomplete'],
  long: [413, 'part_too_large'],
  digest: [400, 'digest_mismatch'],
};

/**
 * The Result of a receiver that stopped for `reason` without placing anything: every such end is a
 * failed upload op, with a code a panel can tell apart. `refused` is a begin's refusal.
 */
export function endedWith(reason: Exclude<SessionStop, 'committed'>, begun: boolean, idleMs: number, refused?: { code: string; message: string }): Result {
  switch (reason) {
    case 'cancelled':
      return { code: 'upload_cancelled', error: 'the upload was cancelled; nothing was placed' };
    case 'idle':
      return { code: 'upload_expired', error: `no call came for ${Math.round(idleMs / 1000)} s, so the upload was dropped; nothing was placed` };
    case 'gone':
      return refused ? { code: refused.code, error: refused.message } : { code: 'upload_not_found', error: 'no such upload session' };
    default:
      // At its lifetime or on a signal the session stays on the disk; the next call resumes it.
      return begun
        ? { code: 'upload_interrupted', error: `this receiver stopped (${reason}) with the upload unfinished; its next call carries on with a new receiver` }
        : { code: 'upload_not_found', error: `this receiver stopped (${reason}) before the upload began` };
  }
}

export async function startSessionReceiving(o: SessionReceiveOptions): Promise<SessionReceiving> {
  let session: UploadSession | undefined;
  let final: Result | undefined;
  let refused: SessionError | undefined;
  const endsSession = endsSessionWith((e) => {
    refused = e;
    session = undefined;
  });
  const progress = () => session && o.progress?.(session.state.received, session.state.size);

  // Pick up the session from the disk (a lost receiver's), and clear what killed receivers left.
  {
    const ctx = o.context();
    try {
      sweepStaleSessions(ctx, o.idleMs, stagingName(o.id));
      try {
        session = UploadSession.open(ctx, o.id);
        progress();
      } catch (e) {
        if (!(e instanceof SessionError)) throw e;
        // Tampered: every call is answered so, and the receiver's Result says it.
        if (e.code === TAMPERED) refused = e;
      }
    } finally {
      ctx.root.close();
    }
  }

  let result: Result | undefined;
  const pod = new PodServer<'committed' | 'cancelled' | 'gone'>({
    tokenSha256: o.tokenSha256,
    requestTimeoutMs: 0,
    socketIdleMs: o.socketIdleMs ?? 30_000,
    // A call no route takes is judged as a status call is, then refused.
    fallback: reading(needsSession(notBusy((_s, _req, res) => send(res, 404, '{"error":"not found"}')))),
    life: {
      idleMs: o.idleMs,
      lifetimeMs: o.lifetimeMs,
      graceMs: 2_000,
      onStop: (reason) => {
        // Abandoned: nothing of it stays. Interrupted (lifetime, signal): the next receiver resumes.
        if (reason === 'idle' && session && !session.busy) {
          const s = session;
          bestEffort(() => {
            const ctx = o.context();
            try {
              s.remove(ctx);
            } finally {
              ctx.root.close();
            }
          });
        }
        // A placed file is the Result whatever stopped the receiver after it (a commit sets `final`).
        result = final ?? endedWith(reason as Exclude<SessionStop, 'committed'>, session !== undefined, o.idleMs, refused);
      },
    },
  });
  const { life } = pod;
  const stop = (reason?: SessionStop) => life.stop(reason);
  const now = o.now ?? Date.now;
  // Writing calls in hand: the idle clock runs only while there are none, whichever way a call was
  // answered. It runs from the session's last begin or accepted part, as a sweep judges the session.
  let inHand = 0;
  const armIdle = () => (session ? life.armIdle(session.state.touched + o.idleMs - Date.now()) : life.armIdle());

  /** Once the answer is out: the session goes on, or the receiver stops for `reason`. */
  function after(res: http.ServerResponse, reason?: SessionStop): void {
    if (reason) whenAnswered(res, () => stop(reason));
  }

  /** A status call: it neither holds nor extends the session's idle period. */
  function reading(h: Handler): Handler {
    return (req, res, url) => {
      req.resume();
      if (life.stopping) return refusal(res, 404, 'upload_not_found', 'the upload session has ended');
      return h(req, res, url);
    };
  }

  /** A call that may change the world: it holds the idle clock while in hand, and must carry a lock that holds now. */
  function writing(h: Handler, drain = true): Handler {
    return (req, res, url) => {
      if (drain) req.resume();
      inHand++;
      life.holdIdle();
      res.once('close', () => {
        if (--inHand === 0) armIdle();
      });
      if (life.stopping) return refusal(res, 404, 'upload_not_found', 'the upload session has ended');
      if (!sessionLockHolds(req.headers[SESSION_LOCK_HEADER], now())) {
        // The rest of a part is read and dropped: a close under it would lose this answer.
        req.resume();
        refusal(res, 409, 'maintenance_in_progress', NO_LOCK);
        if (session || refused) return;
        // A receiver started for a begin that came without a lock has nothing to serve: it ends, saying why.
        refused = new SessionError(409, 'maintenance_in_progress', NO_LOCK);
        return after(res, 'gone');
      }
      return h(req, res, url);
    };
  }

  /** A call on the session itself: a receiver started to resume one the disk does not hold (or holds tampered) has nothing to serve. */
  function needsSession(h: (s: UploadSession, ...a: Parameters<Handler>) => ReturnType<Handler>): Handler {
    return (req, res, url) => {
      if (session) return h(session, req, res, url);
      if (refused) refusal(res, refused.status, refused.code, refused.message);
      else refusal(res, 404, 'upload_not_found', 'no such upload session');
      return after(res, 'gone');
    };
  }

  /** One call at a time changes the session. */
  function notBusy(h: (s: UploadSession, ...a: Parameters<Handler>) => ReturnType<Handler>) {
    return (s: UploadSession, req: http.IncomingMessage, res: http.ServerResponse, url: URL) => {
      if (!s.busy) return h(s, req, res, url);
      // The rest of a refused part is read and dropped, never left unread under a close: that
      // close would reset the connection and lose this answer. The caller closes once answered.
      req.resume();
      return refusal(res, 409, 'upload_busy', 'another call to this upload session is in progress');
    };
  }

  pod.route('GET', '/ready', (req, res) => {
    req.resume();
    send(res, 200, '{}');
  });

  pod.route(
    'POST',
    '/begin',
    writing((_req, res, url) => {
      const size = count(url.searchParams.get('size'));
      const path = url.searchParams.get('path') ?? '';
      if (size === undefined || path === '') return refusal(res, 400, 'bad_request', 'path and size are required');
      if (!session && refused) {
        refusal(res, refused.status, refused.code, refused.message);
        return after(res, 'gone');
      }
      if (session) {
        if (session.state.path !== path || session.state.size !== size) return refusal(res, 409, 'upload_busy', 'the session was begun for another file');
        return send(res, 200, JSON.stringify(viewOf(session.state)));
      }
      const ctx = o.context();
      try {
        session = UploadSession.begin(ctx, o.id, path, size, { idleMs: o.idleMs, parents: url.searchParams.get('parents') === 'true' });
      } catch (e) {
        if (!(e instanceof SessionError)) throw e;
        refused = e;
        refusal(res, e.status, e.code, e.message);
        return after(res, 'gone');
      } finally {
        ctx.root.close();
      }
      progress();
      send(res, 201, JSON.stringify(viewOf(session.state)));
    }),
  );

  pod.route('GET', '/session', reading(needsSession((s, _req, res) => send(res, 200, JSON.stringify(viewOf(s.state))))));

  pod.route(
    'DELETE',
    '/session',
    writing(
      needsSession(
        notBusy((s, _req, res) => {
          const ctx = o.context();
          try {
            s.remove(ctx);
          } finally {
            ctx.root.close();
          }
          res.writeHead(204, { 'cache-control': 'no-store' });
          res.end();
          return after(res, 'cancelled');
        }),
      ),
    ),
  );

  pod.route(
    'POST',
    '/commit',
    writing(
      needsSession(
        notBusy(async (s, _req, res, url) => {
          const sha = url.searchParams.get('sha256');
          if (sha !== null && !HEX64.test(sha)) return refusal(res, 400, 'bad_request', 'sha256 must be 64 lowercase hex characters');
          const ctx = o.context();
          let result: Result;
          s.busy = true;
          try {
            result = await s.commit(ctx, url.searchParams.get('overwrite') === 'true', sha ?? undefined);
          } catch (e) {
            if (!(e instanceof SessionError)) throw e;
            refusal(res, e.status, e.code, e.message);
            return after(res, endsSession(e));
          } finally {
            s.busy = false;
            ctx.root.close();
          }
          send(res, 200, resultBody(result));
          if (result.code) return;
          final = result;
          return after(res, 'committed');
        }),
      ),
    ),
  );

  // A part's body is read by the session, never drained here.
  pod.route(
    'PUT',
    '/part',
    writing(
      needsSession(
        notBusy(async (s, req, res, url) => {
          const offset = count(url.searchParams.get('offset'));
          const size = count(url.searchParams.get('size'));
          const sha = url.searchParams.get('sha256') ?? '';
          const length = req.headers['content-length'];
          if (offset === undefined || size === undefined || !HEX64.test(sha) || length !== String(size)) {
            req.resume();
            return refusal(res, 400, 'bad_request', 'offset, size, sha256 and a Content-Length equal to size are required');
          }
          s.busy = true;
          const ctx = o.context();
          try {
            await s.append(ctx, offset, size, sha, req);
          } catch (e) {
            req.resume();
            if (e instanceof SessionError) refusal(res, e.status, e.code, e.message);
            else if (e instanceof TransferError) refusal(res, TRANSFER[e.reason][0], TRANSFER[e.reason][1], e.message);
            else refusal(res, 500, 'internal', e instanceof Error ? e.message : String(e));
            return after(res, e instanceof SessionError ? endsSession(e) : undefined);
          } finally {
            s.busy = false;
            ctx.root.close();
          }
          progress();
          send(res, 200, JSON.stringify(viewOf(s.state)));
        }),
      ),
      false,
    ),
  );

  const stopped = pod.stopped.then((reason) => ({ reason, result: result! }));
  const address = await pod.listen(o.port, o.host);
  // A resumed session's idle period runs on from its last part: past it, the session is over.
  armIdle();
  return { address, stopped, stop };
}

/**
 * Resumable upload sessions, for files of any size (checked against the volume's free space):
 *
 * - `POST .../files/uploads?path=&parents=true` body `{size}` → 201 view (`parents=true`: the
 *   missing folders of `path` are made at the begin, and again at the commit should they have gone).
 *   The server must be stopped. One session per server (429 otherwise).
 * - `PUT .../files/uploads/{id}?offset=` raw part (≤ 32 MiB) with `Content-Length` and
 *   `Content-Digest` → 200 view; streamed to the receiver, appended on the world volume.
 * - `GET .../files/uploads/{id}` → 200 view, from the session's serving receiver only (it needs just
 *   `get files`, so it never starts one: 409 `upload_paused` when the receivers have ended, 404
 *   when the id never had one); `DELETE .../files/uploads/{id}` → 204.
 * - `POST .../files/uploads/{id}/commit` body `{overwrite?, sha256?}` → 202 `{op, sha256}`: the whole
 *   file's digest checked, renamed into place on the same volume; `op` is the upload as the ops
 *   listing shows it (Felis's answer), already `succeeded`.
 *
 * The session's receiver holds nothing by itself. Each call that changes the world (the begin,
 * which starts the receiver, each part, the commit, a cancel) passes the entry gates (the server
 * stopped) and runs in its turn in the world's line, as any change does, carrying the lock to the
 * receiver; between them other changes run and the server may start. The status takes no ticket.
 *
 * View: `{id, path, size, received, part_max_bytes, parts:[{size, sha256}]}`.
 */
import type { Context } from 'hono';
import { DomainError } from '../../lib/errors.ts';
import { heldLock } from '../../lib/files/held-lock.ts';
import { checkResult } from '../../lib/files/result-check.ts';
import { audit } from '../../lib/http/audit.ts';
import { contentDigestValues, parseContentDigest } from '../../lib/http/content-digest.ts';
import type { Deps } from '../../lib/http/deps.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { type FileCall, openFileCall, openSessionCall, requireEditor, underWorldLock } from '../../lib/http/file-call.ts';
import { serverName } from '../../lib/http/file-request.ts';
import { sendOpAccepted } from '../../lib/http/op-accepted.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { checkLocalPath, declaredLength } from '../../lib/http/upload-request.ts';
import { ServerNotFoundError } from '../../lib/maintenance/errors.ts';
import { parseResultPayload } from '../../lib/protocol/result-parse.ts';
import { committedOp } from '../../lib/uploads/committed.ts';
import { uploadBody } from '../../lib/uploads/receiver.ts';
import { answerLost, answerOrThrow, MAX_SESSIONS_PER_SERVER, notFound, type SessionChannel } from '../../lib/uploads/sessions.ts';

interface View {
  id: string;
  path: string;
  size: number;
  received: number;
}

function sessions(deps: Deps): SessionChannel {
  requireEditor(deps);
  if (!deps.uploadSessions) throw new DomainError('files_unavailable', 'unavailable', 'uploads are not configured');
  return deps.uploadSessions;
}

/** The server exists (no stopped gate: a running server's upload can still be looked at). */
async function knownServer(c: Context, deps: Deps): Promise<string> {
  const server = serverName(c);
  if (!(await deps.servers.getServer(deps.lock.namespace, server))) throw new ServerNotFoundError(server);
  return server;
}

/** What a writing call runs with in its turn: the session's channel, and the lock it carries. */
interface Turn {
  ss: SessionChannel;
  /** The world lock held now (the receiver refuses a writing call without it). */
  lock: () => string | undefined;
  /** Starts a new receiver for a session whose receiver was lost; the turn is already held. */
  resume: (id: string) => () => Promise<void>;
  /** The call may still be under way in the Pod (no answer came): the world stays held until the lock lapses. */
  keep: () => void;
}

/**
 * Runs a session call that changes the world in its turn in the world's line (`Prefer: wait` as
 * for any change), with the lock it then holds.
 */
function inTurn<T>(deps: Deps, f: FileCall, fn: (turn: Turn) => Promise<T>): Promise<T> {
  const ss = sessions(deps);
  const server = f.target.server;
  return underWorldLock(deps, f, () => {
    const held = heldLock(server);
    return fn({ ss, lock: () => held?.value, resume: (id) => () => ss.start(f.target, id), keep: () => held?.keep() });
  });
}

/** A commit or begin whose answer never came may still be placing files: the world stays held. */
async function keptOnLostAnswer<T>(turn: Turn, p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (answerLost(err)) turn.keep();
    throw err;
  }
}

/** Not ended by the caller going away: a call sent runs to its end, and the lock is given back after it. */
const UNCUT = new AbortController().signal;

export const filesUploads = defineFunction('files-uploads', (deps) => ({
  'uploads.begin': async (c, input) => {
    const f = await openFileCall(c, deps, 'upload');
    const ss = sessions(deps);
    checkLocalPath(f.path);
    const { size } = await input.body();
    const { parents } = input.query();
    const oneSession = async () => {
      if ((await ss.active(f.target.server)) >= MAX_SESSIONS_PER_SERVER) {
        throw new DomainError('too_many_uploads', 'busy', `this server already has an upload session; finish or cancel it first (at most ${MAX_SESSIONS_PER_SERVER})`);
      }
    };
    // Refused before waiting in line; counted again in the turn, where another begin for this
    // server (from any instance) has made its receiver Job before it left the line.
    await oneSession();
    const id = ss.newId();
    const q = new URLSearchParams({ path: f.path, size: String(size), ...(parents ? { parents: 'true' } : {}) });
    const a = await inTurn(deps, f, async (turn) => {
      await oneSession();
      await ss.start(f.target, id, f.path);
      // The begin makes the staging folder (and, asked, the path's folders; room from the trash).
      return keptOnLostAnswer(turn, ss.call(f.target.server, id, { method: 'POST', path: `/begin?${q}`, lock: turn.lock }, f.signal));
    });
    if (a.status !== 200 && a.status !== 201) {
      // The refused session's receiver ends at once; answer once it has, so a corrected begin
      // right after is not refused as a second session.
      await ss.ended(f.target.server, id, 5_000);
    }
    return sendJson(c, 201, answerOrThrow(a, [200, 201]));
  },

  'uploads.get': async (c) => {
    const server = await knownServer(c, deps);
    const ss = sessions(deps);
    // Read-only (`get files`, no ticket): answered by a receiver that serves, never by starting one.
    const a = await ss.call(server, c.req.param('id') ?? '', { method: 'GET', path: '/session' }, c.req.raw.signal);
    return sendJson(c, 200, answerOrThrow(a, [200]));
  },

  'uploads.part': async (c, input) => {
    const f = await openSessionCall(c, deps);
    sessions(deps); // 503 when unconfigured, before the part's own checks
    const { offset: raw } = input.query();
    const size = declaredLength(c.req.raw.headers);
    const sha256 = parseContentDigest(contentDigestValues(c.req.raw.headers)).toString('hex');
    const id = c.req.param('id') ?? '';
    const q = new URLSearchParams({ offset: raw, size: String(size), sha256 });
    // The body is read only in the part's turn: other changes of the world interleave between parts.
    const a = await inTurn(deps, f, (turn) =>
      turn.ss.call(f.target.server, id, { method: 'PUT', path: `/part?${q}`, body: { stream: uploadBody(c), size }, lock: turn.lock }, f.signal, turn.resume(id)),
    );
    return sendJson(c, 200, answerOrThrow(a, [200]));
  },

  'uploads.cancel': async (c) => {
    const f = await openSessionCall(c, deps);
    const id = c.req.param('id') ?? '';
    const a = await inTurn(deps, f, (turn) => turn.ss.call(f.target.server, id, { method: 'DELETE', path: '/session', lock: turn.lock }, f.signal, turn.resume(id)));
    answerOrThrow(a, [204]);
    // Answer once the receiver has ended, so a new session may begin right after.
    await sessions(deps).ended(f.target.server, id, 5_000);
    return c.body(null, 204);
  },

  'uploads.commit': async (c, input) => {
    const id = c.req.param('id') ?? '';
    // The stopped and volume gates again; the path is the session's, so none is asked for here.
    const f = await openSessionCall(c, deps);
    const body = await input.body();
    const server = f.target.server;
    const overwrite = body.overwrite ?? false;
    const q = new URLSearchParams(overwrite ? { overwrite: 'true' } : {});
    if (body.sha256) q.set('sha256', body.sha256);
    const { view, a } = await inTurn(deps, f, async (turn) => {
      const view = answerOrThrow(await turn.ss.call(server, id, { method: 'GET', path: '/session' }, f.signal, turn.resume(id)), [200]) as View;
      if (view.received !== view.size) throw new DomainError('upload_incomplete', 'conflict', `the upload holds ${view.received} of its ${view.size} bytes`);
      // Once sent, the commit is not cut by the caller going away: the file is placed, or not, before the world is given back.
      const a = await keptOnLostAnswer(turn, turn.ss.call(server, id, { method: 'POST', path: `/commit?${q}`, lock: turn.lock }, UNCUT));
      return { view, a };
    });
    if (a.status !== 200) answerOrThrow(a, []);
    const r = checkResult(parseResultPayload(a.text));
    if (!r.sha256) throw notFound();
    // Placed; the receiver ends now. Answer once it has, so a new session may begin right after.
    const jobs = await sessions(deps).ended(server, id, 5_000);
    audit(deps.logger, c.get('requestId'), 'file.upload', server, view.path, { overwrite, sha256: r.sha256, size_bytes: view.size });
    const op = committedOp(id, a.opId ?? '', view.path, view.size, r, jobs, new Date());
    return sendOpAccepted(c, server, op.id, { op, sha256: r.sha256 });
  },
}));

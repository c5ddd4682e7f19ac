/**
 * Resumable upload sessions, for files of any size (checked against the volume's free space):
 *
 * - `POST .../files/uploads?path=&parents=true` body `{size}` → 201 view (`parents=true`: the
 *   missing folders of `path` are made at the begin, and again at the commit should they have gone). The server must be stopped; the world
 *   lock is taken around creating the session's receiver Job, which then holds the world until the
 *   session ends (a server start is refused meanwhile). One session per server (429 otherwise).
 * - `PUT .../files/uploads/{id}?offset=` raw part (≤ 32 MiB) with `Content-Length` and
 *   `Content-Digest` → 200 view; streamed to the receiver, appended on the world volume.
 * - `GET .../files/uploads/{id}` → 200 view, from the session's serving receiver only (it needs just
 *   `get files`, so it never starts one: 409 `upload_paused` when the receivers have ended, 404
 *   when the id never had one); `DELETE .../files/uploads/{id}` → 204.
 * - `POST .../files/uploads/{id}/commit` body `{overwrite?, sha256?}` → 202 `{op, sha256}`: the whole
 *   file's digest checked, renamed into place on the same volume; `op` is the upload as the ops
 *   listing shows it (Felis's answer), already `succeeded`.
 *
 * View: `{id, path, size, received, part_max_bytes, parts:[{size, sha256}]}`.
 */
import type { Context } from 'hono';
import { audit } from '../../lib/http/audit.ts';
import { contentDigestValues, parseContentDigest } from '../../lib/http/content-digest.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, requireEditor, underWorldLock } from '../../lib/http/file-call.ts';
import { serverName } from '../../lib/http/file-request.ts';
import type { Deps } from '../../lib/http/deps.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { ServerNotFoundError } from '../../lib/maintenance/errors.ts';
import { checkResult } from '../../lib/files/decode.ts';
import { parseResultPayload } from '../../lib/protocol/result-parse.ts';
import { answerOrThrow, MAX_SESSIONS_PER_SERVER, notFound, type SessionChannel } from '../../lib/uploads/sessions.ts';
import { committedOp } from '../../lib/uploads/committed.ts';
import { checkLocalPath, declaredLength } from '../../lib/http/upload-request.ts';
import { uploadBody } from '../../lib/uploads/receiver.ts';
import { DomainError } from '../../lib/errors.ts';

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


/** The server exists (no stopped gate: a running server's upload can still be looked at or cancelled). */
async function knownServer(c: Context, deps: Deps): Promise<string> {
  const server = serverName(c);
  if (!(await deps.servers.getServer(deps.lock.namespace, server))) throw new ServerNotFoundError(server);
  return server;
}

export const filesUploads = defineFunction('files-uploads', (deps) => {
  /** Starts a new receiver for a session whose receiver was lost: the world must be free again. */
  const resumer = (server: string, id: string) => async () => {
    const access = { op: 'upload' as const, path: '' };
    const t = await deps.gates.enter(server, access);
    await deps.gates.run(server, access, () => deps.uploadSessions!.start(t, id));
  };

  return {
    'uploads.begin': async (c, input) => {
      const f = await openFileCall(c, deps, 'upload');
      const ss = sessions(deps);
      checkLocalPath(f.path);
      const { size } = await input.body();
      const { parents } = input.query();
      if ((await ss.active(f.target.server)) >= MAX_SESSIONS_PER_SERVER) {
        throw new DomainError('too_many_uploads', 'busy', `this server already has an upload session; finish or cancel it first (at most ${MAX_SESSIONS_PER_SERVER})`);
      }
      const id = ss.newId();
      // The lock covers the Job's creation; from then on the Job itself holds the world.
      await underWorldLock(deps, f, () => ss.start(f.target, id, f.path));
      const a = await ss.call(f.target.server, id, { method: 'POST', path: `/begin?${new URLSearchParams({ path: f.path, size: String(size), ...(parents ? { parents: 'true' } : {}) })}` }, f.signal);
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
      // Read-only (`get files`): answered by a receiver that serves, never by starting one.
      const a = await ss.call(server, (c.req.param('id') ?? ''), { method: 'GET', path: '/session' }, c.req.raw.signal);
      return sendJson(c, 200, answerOrThrow(a, [200]));
    },

    'uploads.part': async (c, input) => {
      const server = await knownServer(c, deps);
      const ss = sessions(deps);
      const { offset: raw } = input.query();
      const size = declaredLength(c.req.raw.headers);
      const sha256 = parseContentDigest(contentDigestValues(c.req.raw.headers)).toString('hex');
      const id = (c.req.param('id') ?? '');
      const q = new URLSearchParams({ offset: raw, size: String(size), sha256 });
      const a = await ss.call(server, id, { method: 'PUT', path: `/part?${q}`, body: { stream: uploadBody(c), size } }, c.req.raw.signal, resumer(server, id));
      return sendJson(c, 200, answerOrThrow(a, [200]));
    },

    'uploads.cancel': async (c) => {
      const server = await knownServer(c, deps);
      const ss = sessions(deps);
      const id = (c.req.param('id') ?? '');
      const a = await ss.call(server, id, { method: 'DELETE', path: '/session' }, c.req.raw.signal, resumer(server, id));
      answerOrThrow(a, [204]);
      // Answer once the receiver has ended, so a new session may begin right after.
      await ss.ended(server, id, 5_000);
      return c.body(null, 204);
    },

    'uploads.commit': async (c, input) => {
      const id = (c.req.param('id') ?? '');
      // The stopped and volume gates again; the path is the session's, so none is asked for here.
      const server = serverName(c);
      const t = await deps.gates.enter(server, { op: 'upload', path: '' });
      const ss = sessions(deps);
      const body = await input.body();
      const signal = c.req.raw.signal;
      const view = answerOrThrow(await ss.call(server, id, { method: 'GET', path: '/session' }, signal, resumer(t.server, id)), [200]) as View;
      if (view.received !== view.size) throw new DomainError('upload_incomplete', 'conflict', `the upload holds ${view.received} of its ${view.size} bytes`);
      const overwrite = body.overwrite ?? false;
      const q = new URLSearchParams(overwrite ? { overwrite: 'true' } : {});
      if (body.sha256) q.set('sha256', body.sha256);
      const a = await ss.call(server, id, { method: 'POST', path: `/commit?${q}` }, signal);
      if (a.status !== 200) answerOrThrow(a, []);
      const r = checkResult(parseResultPayload(a.text));
      if (!r.sha256) throw notFound();
      // Placed; the receiver ends now. Answer once it has, so a new session may begin right after.
      const jobs = await ss.ended(server, id, 5_000);
      audit(deps.logger, c.get('requestId'), 'file.upload', server, view.path, { overwrite, sha256: r.sha256, size_bytes: view.size });
      return sendJson(c, 202, { op: committedOp(a.opId ?? '', view.path, view.size, r, jobs, new Date()), sha256: r.sha256 });
    },
  };
});

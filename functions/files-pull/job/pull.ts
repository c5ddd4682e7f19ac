/**
 * pull(path, url, to): fetches `url` for the existing folder `path`, as the file `to` or the name
 * the answer's Content-Disposition or the URL's path suggests (pull/name.ts), into the pull's own
 * staging folder (pull-staging.ts), and stops there: the result says `staged`, with the path it
 * will land at and its bytes. Every connection goes through the SSRF guard (pull/guard.ts,
 * pull/connect.ts).
 *
 * A pull holds no world (docs/pulls.md): its Job is labelled mode `read`, other changes and a start
 * go ahead while it downloads, and it writes nothing but its staging, named by its op id, which no
 * other op touches. The file is placed later by `pull-place` (pull-place.ts), a short change
 * under the world's line that links it into place. So it recovers nothing, remembers nothing and
 * purges nothing from the undo trash: those are for a Job that holds the world. The name is judged
 * here too (a given name before connecting, the server's once it answers), so that a refusal comes
 * before the download rather than after it. A refusal, a failure, a cap, a cancel or a stop removes
 * the staging: nothing is left behind.
 *
 * Bounds: `FELIS_PULL_MAX_BYTES`, then the volume's free space, checked against Content-Length
 * before a byte is written and again while streaming; the connect and idle timeouts.
 *
 * @module
 */
import fs from 'node:fs';
import { CONNECT_TIMEOUT_MS, IDLE_TIMEOUT_MS, openPull, PullFailed } from '../../../job/pull/connect.ts';
import { PolicyError, PullRefused, policyFromEnv } from '../../../job/pull/guard.ts';
import { suggestedName } from '../../../job/pull/name.ts';
import { FileSink } from '../../../job/pull/sink.ts';
import { GAME_GID, GAME_UID, type OpContext, type OpRequestOf } from '../../../job/runtime/types.ts';
import { freeBytes, trashBytes } from '../../../job/trash/room.ts';
import { bestEffort, fail, failure, msg, writeFailure } from '../../../job/volume/failure.ts';
import { clean, join } from '../../../job/volume/pathutil.ts';
import { errCode } from '../../../job/volume/root.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import { formatProgressLine } from '../../../lib/protocol/result.ts';
import { checkName } from './pull-landing.ts';
import { DATA, isOpId, keepSecondsFrom, PullStaging } from './pull-staging.ts';

const { O_RDONLY, O_DIRECTORY } = fs.constants;

export { checkName };

/** The largest file a pull takes unless the operator says otherwise: 4 GiB. */
export const DEFAULT_MAX_BYTES = 4 * 1024 ** 3;
const PROGRESS_INTERVAL_MS = 1000;

type Env = Record<string, string | undefined>;

/** Thrown by the abort of a cancel, so the op can tell it from a failure. */
export class PullCancelled extends Error {
  constructor() {
    super('the pull was cancelled');
    this.name = 'PullCancelled';
  }
}

function positive(env: Env, name: string, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  if (!/^\d+$/.test(v) || Number(v) < 1 || !Number.isSafeInteger(Number(v))) throw new PolicyError(`${name} must be a whole number above 0`);
  return Number(v);
}

export async function pull(ctx: OpContext, req: OpRequestOf<'pull'>): Promise<Result> {
  const s = req.pull;
  if (!s || s.url === '') return fail('bad_path', 'a pull needs a URL');
  const policy = policyFromEnv(s.env);
  const maxBytes = positive(s.env, 'FELIS_PULL_MAX_BYTES', DEFAULT_MAX_BYTES);
  const connectTimeoutMs = positive(s.env, 'FELIS_PULL_CONNECT_TIMEOUT_SECONDS', CONNECT_TIMEOUT_MS / 1000) * 1000;
  const idleTimeoutMs = positive(s.env, 'FELIS_PULL_IDLE_TIMEOUT_SECONDS', IDLE_TIMEOUT_MS / 1000) * 1000;

  // The staging is named by the op id (FELIS_OP_ID, from the Job's op-id label): the placement finds it so.
  const opId = ctx.opId;
  if (!isOpId(opId)) throw new Error('a pull needs its op id (FELIS_OP_ID) to name its staging folder');
  const keepMs = keepSecondsFrom(s.env) * 1000;
  const folder = clean(req.path);
  let dirFd: number;
  try {
    dirFd = ctx.root.openFile(folder, O_RDONLY | O_DIRECTORY, 'open', true);
  } catch (e) {
    return failure(folder === '' ? '.' : folder, e, 'open');
  }
  const abort = new AbortController();
  const onCancel = () => abort.abort(new PullCancelled());
  if (s.cancel?.aborted) onCancel();
  s.cancel?.addEventListener('abort', onCancel, { once: true });
  let staging: PullStaging | undefined;
  let fd: number | undefined;
  let staged = false;
  // A stop signal (the deadline, a drain) while fetching: the staging goes, the Job ends.
  ctx.stop.staging(() => {
    abort.abort(new PullCancelled());
    staging?.remove();
  });
  try {
    const given = req.to !== undefined && req.to !== '' ? req.to : undefined;
    if (given !== undefined) {
      const refused = checkName(ctx, dirFd, folder, given, 'name');
      if (refused) return refused;
    }
    const opened = await openPull(s.url, { policy, connectTimeoutMs, idleTimeoutMs, signal: abort.signal, ...s.connect });
    const { response } = opened;
    const stopStream = (e: Error) => opened.abort(e);
    abort.signal.addEventListener('abort', () => stopStream(abort.signal.reason as Error), { once: true });

    let name = given;
    if (name === undefined) {
      const suggested = suggestedName(response.headers['content-disposition'], opened.url);
      if (!suggested) {
        response.destroy();
        return fail('bad_path', `${opened.url.origin}${opened.url.pathname} names no file: give the pull a name`);
      }
      if ('fault' in suggested) {
        response.destroy();
        return fail('bad_name', `${opened.url.origin}: ${suggested.fault}; nothing was placed`);
      }
      const refused = checkName(ctx, dirFd, folder, suggested.name, suggested.from);
      if (refused) {
        response.destroy();
        return refused;
      }
      name = suggested.name;
    }
    const final = join(folder, name);

    const lengthHeader = response.headers['content-length'];
    const length = lengthHeader !== undefined && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
    // The operator's limit first: a length past it is refused before anything about space is done.
    if (length !== undefined && length > maxBytes) {
      response.destroy();
      return fail('too_large', `${opened.url.origin} sends ${length} bytes, more than a pull takes (${maxBytes}, FELIS_PULL_MAX_BYTES); nothing was placed`);
    }
    // The free space only: purging the undo trash is for a Job that holds the world, which a pull
    // does not (another change may be restoring from it meanwhile).
    const avail = freeBytes(ctx);
    const cap = avail === undefined ? maxBytes : Math.min(maxBytes, avail);
    if (length !== undefined && avail !== undefined && length > avail) {
      response.destroy();
      return { ...fail('no_space', `the file is ${length} bytes and the server's volume has ${avail} free${trashNote(ctx)}; nothing was placed`), need: length, avail };
    }

    try {
      ({ staging, dataFd: fd } = PullStaging.create(ctx.root.fd, { op: opId, path: folder, name, expires: ctx.now() + keepMs }));
    } catch (e) {
      response.destroy();
      return writeFailure(final, e, 'open');
    }
    const total = length ?? 0;
    let done = 0;
    let lastReport = -Infinity;
    const report = (force: boolean) => {
      const now = performance.now();
      if (!force && now - lastReport < PROGRESS_INTERVAL_MS) return;
      lastReport = now;
      ctx.progress(formatProgressLine({ done, total }));
    };
    report(true);
    // Written as the socket delivers (pull/sink.ts: batched synchronous writes, the file synced in the
    // background as it grows); the kernel's socket buffer holds what arrives during a write.
    const sink = new FileSink(fd);
    try {
      for await (const chunk of response as AsyncIterable<Buffer>) {
        done += chunk.length;
        if (done > cap) {
          response.destroy();
          await sink.settle(); // the descriptor is closed below: no sync may still be using it
          return cap === maxBytes
            ? fail('too_large', `${opened.url.origin} sent more than a pull takes (${maxBytes} bytes, FELIS_PULL_MAX_BYTES); nothing was placed`)
            : { ...fail('no_space', `the file does not fit the server's volume (${avail} bytes free${trashNote(ctx)}); nothing was placed`), need: done, avail: avail ?? 0 };
        }
        sink.write(chunk);
        report(false);
      }
      await sink.end();
    } catch (e) {
      await sink.settle();
      if (abort.signal.reason instanceof PullCancelled) throw abort.signal.reason;
      if (e instanceof PullFailed) throw e;
      const code = errCode(e);
      const syscall = (e as { syscall?: string }).syscall;
      if (code === 'ENOSPC' || code === 'EDQUOT') return fail('no_space', msg.noSpace(final));
      if (code !== undefined && /^E[A-Z0-9]+$/.test(code) && (syscall === 'write' || syscall === 'writev')) return writeFailure(final, e, 'write');
      if (code !== undefined && syscall === 'fdatasync') return writeFailure(final, e, 'sync');
      throw new PullFailed(`${opened.url.origin}: the transfer broke off after ${done} bytes (${e instanceof Error ? e.message : String(e)})`);
    }
    if (!response.complete || (length !== undefined && done !== length)) {
      throw new PullFailed(`${opened.url.origin}: the transfer ended after ${done} of ${length ?? 'an unknown number of'} bytes`);
    }
    report(true);
    // From here on a stop waits: what remains is quick and local.
    if (abort.signal.aborted) throw abort.signal.reason;
    ctx.stop.settled();
    try {
      ctx.fsync(fd);
    } catch (e) {
      return writeFailure(final, e, 'sync');
    }
    // Given to the game's uid now, so the placement is a link alone (a courtesy: the game can still read it).
    bestEffort(() => ctx.chown(staging!.at(DATA), GAME_UID, GAME_GID));
    bestEffort(() => ctx.fsync(staging!.fd));
    staged = true;
    // Downloaded, waiting to be placed at `final` (pull-place.ts), where the landing is judged again.
    return { staged: true, bytes: done, to: final };
  } catch (e) {
    if (e instanceof PullCancelled || (abort.signal.reason instanceof PullCancelled && abort.signal.aborted)) return fail('pull_cancelled', 'the pull was cancelled; nothing was placed');
    if (e instanceof PullRefused) return fail('pull_refused', `refused: ${e.reason}`);
    if (e instanceof PullFailed) return fail('pull_failed', e.message);
    throw e;
  } finally {
    ctx.stop.settled();
    s.cancel?.removeEventListener('abort', onCancel);
    if (fd !== undefined) fs.closeSync(fd);
    if (staging && !staged) bestEffort(() => staging!.remove());
    staging?.close();
    fs.closeSync(dirFd);
  }
}

/** What a refusal for space adds when the undo trash holds bytes a pull does not take back. */
function trashNote(ctx: OpContext): string {
  const held = trashBytes(ctx);
  return held > 0 ? ` (the undo trash holds ${held} more, which a pull does not take back: empty it, or pull again once its records expire)` : '';
}

/**
 * pull(path, url, to): fetches `url` into the existing folder `path` as the file `to`, or the name
 * the answer's Content-Disposition or the URL's path suggests (pull/name.ts). Every connection goes
 * through the SSRF guard (pull/guard.ts, pull/connect.ts). The bytes land under an editor working
 * name (hidden from every op), are fsynced, chowned to the game's uid and linked into place — a
 * link, not a rename, so an existing name is never replaced — then the working name goes. A
 * refusal, a failure, a cap or a cancel removes the working file: nothing is left behind.
 *
 * Bounds: `FELIS_PULL_MAX_BYTES`, then the volume's free space (with what the trash could give
 * back, trash/room.ts), checked against Content-Length before a byte is written and again while
 * streaming; the connect and idle timeouts.
 *
 * @module
 */
import fs from 'node:fs';
import { newNameRefusal, shownName } from '../../lib/protocol/names.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { formatProgressLine } from '../../lib/protocol/result.ts';
import { bestEffort, fail, failure, msg, writeFailure } from '../failure.ts';
import { clean, join } from '../pathutil.ts';
import { atPath, errCode, existsAt } from '../root.ts';
import { GAME_GID, GAME_UID, type OpContext, type OpRequest } from '../types.ts';
import { isWorkingName, reservedMessage, TEMP_PREFIX } from '../working-files.ts';
import { isWithheldName } from '../withheld.ts';
import { freeBytes } from '../trash/room.ts';
import { freeLandingRefused } from '../redacted-values.ts';
import { openPull, PullFailed, type ConnectOptions, CONNECT_TIMEOUT_MS, IDLE_TIMEOUT_MS } from '../pull/connect.ts';
import { policyFromEnv, PolicyError, PullRefused } from '../pull/guard.ts';
import { suggestedName } from '../pull/name.ts';
import { FileSink } from '../pull/sink.ts';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_RDONLY, O_DIRECTORY } = fs.constants;

/** The largest file a pull takes unless the operator says otherwise: 4 GiB. */
export const DEFAULT_MAX_BYTES = 4 * 1024 ** 3;
const PROGRESS_INTERVAL_MS = 1000;

type Env = Record<string, string | undefined>;

/** What a pull reads besides its flags: the operator's rules and bounds, from the Job's env. */
export interface PullSettings {
  url: string;
  env: Env;
  /** Tests: the resolver and the request function (to spy on connections). */
  connect?: Pick<ConnectOptions, 'resolve' | 'request'>;
  /** Ends the pull as cancelled (the cancel call the Pod serves: pull/cancel-server.ts). */
  cancel?: AbortSignal;
}

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

/**
 * The refusal of a name the pull would create, or null when it may: one new file's name by the
 * name rule and without a backslash, not a working name (`bad_name`, whether the caller gave it or
 * the server suggested it), not the withheld file (`bad_path`), not taken (`exists`).
 */
export function checkName(ctx: OpContext, dirFd: number, folder: string, name: string, from: string): Result | null {
  const badName = newNameRefusal(`the name (from ${from})`, name) ?? (name.includes('\\') ? `the name (from ${from}) ${JSON.stringify(shownName(name))} must be one name, without a backslash` : undefined);
  if (badName) return fail('bad_name', `${badName}; nothing was placed`);
  if (isWorkingName(name)) return fail('bad_name', `${reservedMessage(name)} (from ${from}); nothing was placed`);
  const final = join(folder, name);
  if (isWithheldName(ctx.root, final)) return fail('bad_path', `${final}: the withheld file cannot be created by a pull`);
  if (existsAt(dirFd, name)) return fail('exists', msg.exists(final));
  return null;
}

export async function pull(ctx: OpContext, req: OpRequest): Promise<Result> {
  const s = req.pull;
  if (!s || s.url === '') return fail('bad_path', 'a pull needs a URL');
  const policy = policyFromEnv(s.env);
  const maxBytes = positive(s.env, 'FELIS_PULL_MAX_BYTES', DEFAULT_MAX_BYTES);
  const connectTimeoutMs = positive(s.env, 'FELIS_PULL_CONNECT_TIMEOUT_SECONDS', CONNECT_TIMEOUT_MS / 1000) * 1000;
  const idleTimeoutMs = positive(s.env, 'FELIS_PULL_IDLE_TIMEOUT_SECONDS', IDLE_TIMEOUT_MS / 1000) * 1000;

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
  let temp: string | undefined;
  let fd: number | undefined;
  let landed = false;
  // A stop signal (the deadline, a drain) while fetching: the working file goes, the Job ends.
  ctx.stop.staging(() => {
    abort.abort(new PullCancelled());
    if (temp !== undefined) fs.unlinkSync(atPath(dirFd, temp));
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
    const avail = freeBytes(ctx, length);
    const cap = avail === undefined ? maxBytes : Math.min(maxBytes, avail);
    if (length !== undefined && avail !== undefined && length > avail) {
      response.destroy();
      return { ...fail('no_space', `the file is ${length} bytes and the server's volume has ${avail} free; nothing was placed`), need: length, avail };
    }

    temp = TEMP_PREFIX + ctx.randomBytes(6).toString('hex');
    try {
      fd = fs.openSync(atPath(dirFd, temp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
      fs.fchmodSync(fd, 0o644);
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
            : { ...fail('no_space', `the file does not fit the server's volume (${avail} bytes free); nothing was placed`), need: done, avail: avail ?? 0 };
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
    bestEffort(() => ctx.chown(atPath(dirFd, temp!), GAME_UID, GAME_GID)); // a courtesy: the game can still read it
    // A file that would become the root server.properties holding a redacted placeholder is refused.
    const placeholder = freeLandingRefused(ctx.root, dirFd, name, final, atPath(dirFd, temp));
    if (placeholder) return placeholder;
    try {
      // A link fails on an existing name where a rename would replace it.
      fs.linkSync(atPath(dirFd, temp), atPath(dirFd, name));
    } catch (e) {
      if (errCode(e) === 'EEXIST') return fail('exists', msg.exists(final));
      return writeFailure(final, e, 'link');
    }
    landed = true;
    bestEffort(() => fs.unlinkSync(atPath(dirFd, temp!)));
    bestEffort(() => ctx.fsync(dirFd)); // the link happened; durability of the entry is best effort
    return { files: 1, bytes: done, to: final };
  } catch (e) {
    if (e instanceof PullCancelled || (abort.signal.reason instanceof PullCancelled && abort.signal.aborted)) return fail('pull_cancelled', 'the pull was cancelled; nothing was placed');
    if (e instanceof PullRefused) return fail('pull_refused', `refused: ${e.reason}`);
    if (e instanceof PullFailed) return fail('pull_failed', e.message);
    throw e;
  } finally {
    ctx.stop.settled();
    s.cancel?.removeEventListener('abort', onCancel);
    if (fd !== undefined) fs.closeSync(fd);
    if (temp !== undefined && !landed) bestEffort(() => fs.unlinkSync(atPath(dirFd, temp!)));
    fs.closeSync(dirFd);
  }
}

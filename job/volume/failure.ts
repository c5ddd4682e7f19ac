/**
 * Mapping of filesystem errors onto caller-fault Results: "does not exist" is
 * `not_found`, ENOSPC/EDQUOT during a write is `no_space`, and every other OS error is `bad_path`
 * with the error text (fail closed). Errors that carry no errno are bugs or infrastructure
 * failures: they are rethrown, so the program exits 1 without a result line.
 *
 * @module
 */
import type { Result, ResultCode } from '../../lib/protocol/result.ts';
import { errCode, toFsError } from './root.ts';

/** Result messages reused by several ops. */
export const msg = {
  notExist: (p: string) => `${p} does not exist`,
  exists: (p: string) => `${p} already exists`,
  isDir: (p: string) => `${p} is a directory, not a file`,
  notRegular: (p: string) => `${p} is not a regular file`,
  noSpace: (p: string) => `the server's volume is full; ${p} was left unchanged`,
  folderMissing: (dir: string) => `folder ${dir} does not exist`,
};

/**
 * Runs a step whose failure must not fail the op: the op's effect is already in place (an fsync
 * after the rename) or is a courtesy (chown back to the game's uid). Say why at the call.
 */
export function bestEffort(step: () => void): void {
  try {
    step();
  } catch {
    // Deliberately ignored: see the caller.
  }
}

export function fail(code: ResultCode, error: string): Result {
  return { code, error };
}

/** `failure`: ENOENT → not_found `%s does not exist`; any other OS error → bad_path with its text. */
export function failure(name: string, e: unknown, op = 'open'): Result {
  const code = errCode(e);
  if (code === undefined || !/^E[A-Z0-9]+$/.test(code)) throw e;
  if (code === 'ENOENT') return fail('not_found', msg.notExist(name));
  const fe = toFsError(e, op, name);
  return fail('bad_path', fe instanceof Error ? fe.message : String(fe));
}

/** `writeFailure`: ENOSPC/EDQUOT → no_space; otherwise as `failure`. */
export function writeFailure(name: string, e: unknown, op = 'open'): Result {
  const code = errCode(e);
  if (code === 'ENOSPC' || code === 'EDQUOT') return fail('no_space', msg.noSpace(name));
  return failure(name, e, op);
}

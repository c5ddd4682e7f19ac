/**
 * A warm mutation's call to an edit session Pod: `POST /op` with the Job's token and a JSON body
 * carrying exactly what a one-shot Job of the same op would be started with (its container's
 * arguments and its env, content and items included) and the annotation lock the caller holds.
 * The Pod runs those arguments through the same program a one-shot Job runs, so the answer, the
 * guards and every code are the one-shot Job's by construction; the body's 200 is the result
 * line's payload.
 *
 * Both sides are here: the functions encode (lib/browse/edit-sessions.ts), the Pod decodes and
 * judges the lease (job/serve/edit-server.ts). No validation library: the Job's bundle carries none.
 * @module
 */
import { GRACE_MS, parseLock } from './lock-value.ts';
import { type EditOp, opHas } from './ops.ts';

export const EDIT_PATH = '/op';
/** `POST /end`: the session stops now (a function saw the server no longer stopped). */
export const END_PATH = '/end';

/**
 * Whether a session Pod changes the world for an op (its contract's `edit`): the small, synchronous
 * ones. The long ones (archives, single uploads) keep their own Jobs, whose Pods hold the world while they run; an upload
 * session has its own receiver, which, like this Pod, changes the world only in a call carrying
 * the lock (session-lock.ts); a pull's download holds nothing, and its placement (`pull-place`) is
 * a Job of its own, made by the settle pass.
 */
export function isEditOp(op: string): op is EditOp {
  return opHas(op, 'edit');
}

/** The env a call may carry: the op's content and items, the trash's settings, the op's id. */
const ENV_NAME = /^(FELIS_FILE_CONTENT_(PARTS|[0-9]{1,4})|FELIS_BATCH_(PARTS|[0-9]{1,4})|FELIS_TRASH|FELIS_TRASH_SECONDS|FELIS_ACTOR|FELIS_OP_ID)$/;

/**
 * Whether an env var of the one-shot Job travels in a call. What does not is the process's own
 * (`NODE_OPTIONS`: the session Pod runs with the heap limits of the ops it makes, set on its Job).
 */
export function callCarries(name: string): boolean {
  return ENV_NAME.test(name);
}

/** The largest body a Pod reads: a batch's items (1 MiB of env) or a write's content, with room. */
export const MAX_EDIT_BODY_BYTES = 3 << 20;
const MAX_ARGS = 64;
const MAX_ARG_CHARS = 16 << 10;

/**
 * A call is refused once the lock it carries is this close to lapsing (or this far in the future,
 * for a Pod whose clock runs behind): the op must end while the lock still holds, whatever the
 * clocks of the function's and the Pod's nodes say, so the margin covers the op and the skew.
 */
export const LEASE_MARGIN_MS = 30_000;

export interface EditCall {
  /** The container's arguments after the program: `files --op … --path … --worlds-root …`. */
  argv: string[];
  env: Record<string, string>;
  /** The annotation lock value the caller wrote and holds while this call runs. */
  lock: string;
}

export function encodeEditCall(c: EditCall): string {
  return JSON.stringify({ argv: c.argv, env: c.env, lock: c.lock });
}

/** The call, or a message saying what is wrong with it (the Pod answers 400 with it). */
export function decodeEditCall(body: string): EditCall | string {
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    return 'the body is not JSON';
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'the body is not an object';
  const { argv, env, lock } = v as Record<string, unknown>;
  if (!Array.isArray(argv) || argv.length < 1 || argv.length > MAX_ARGS || !argv.every((a) => typeof a === 'string' && a.length <= MAX_ARG_CHARS)) return 'argv must be a list of strings';
  if (argv[0] !== 'files') return 'argv must start with files';
  if (typeof env !== 'object' || env === null || Array.isArray(env)) return 'env must be an object';
  for (const [k, val] of Object.entries(env)) {
    if (!callCarries(k)) return `env ${JSON.stringify(k.slice(0, 64))} is not one a call may carry`;
    if (typeof val !== 'string') return `env ${k} must be a string`;
  }
  if (typeof lock !== 'string') return 'lock must be the lock value held';
  return { argv: argv as string[], env: env as Record<string, string>, lock };
}

/**
 * Whether a call carrying `lock` may change the world at `nowMs`: a file-write lock, dated within
 * the grace less the margin, either way. A `config-write` lock never reaches a session (a running
 * system server's settings save is a one-shot Job), nor does any other kind.
 */
export function leaseHolds(lock: string, nowMs: number): boolean {
  const l = parseLock(lock);
  if (l?.kind !== 'file-write') return false;
  const age = nowMs - l.at.getTime();
  const limit = GRACE_MS - LEASE_MARGIN_MS;
  return age < limit && -age < limit;
}

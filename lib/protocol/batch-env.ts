/**
 * The items of a many-file op (delete-many, move-many, chmod-many) as they travel to its one Job:
 * in the Pod spec's env, because the Job's command line must stay Felis's shape (`--op … --path …`)
 * and a thousand paths would not fit one argument anyway.
 *
 * The JSON of the items is gzipped, then base64, cut into `FELIS_BATCH_0` … `FELIS_BATCH_<n-1>`
 * of at most 65536 characters (Linux refuses an env string over 128 KiB), counted by
 * `FELIS_BATCH_PARTS`. Gzip because the env is stored twice (the Job and its Pod, each an etcd
 * object of at most 1.5 MiB): a 1 MiB body of paths, which repeat their folders, shrinks several
 * times, where plain base64 would grow it by a third. What still encodes to more than
 * MAX_BATCH_ENV_CHARS is refused before any Job (413 too_large).
 *
 * Both sides are here: the functions encode, the Job program decodes (no validation library: the
 * Job's bundle carries none, so the shape is checked by hand).
 * @module
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { CONTENT_PART_CHARS, type EnvVar, STRICT_BASE64 } from './content-env.ts';
import { type BatchOp, type ItemsOp, itemsField, opHas } from './ops.ts';

export interface Move {
  from: string;
  to: string;
}
export interface ModeChange {
  path: string;
  /** Exactly three octal digits (`"644"`): no setuid, setgid or sticky bit. */
  mode: string;
}

export type Batch = { paths: string[] } | { moves: Move[] } | { files: ModeChange[] };

/** Items in one call: the API's limit, which the Job holds to as well. */
export const MAX_BATCH_ITEMS = 1000;
/** The most base64 the env carries (in both the Job and its Pod, under etcd's 1.5 MiB an object). */
export const MAX_BATCH_ENV_CHARS = 1 << 20;
/** What the Job inflates at most: more than any 1 MiB body's JSON. */
const MAX_BATCH_JSON_BYTES = 4 << 20;

export const BATCH_PARTS_ENV = 'FELIS_BATCH_PARTS';
export const BATCH_PART_ENV_PREFIX = 'FELIS_BATCH_';

export const MODE = /^[0-7]{3}$/;

/** The field each op's items are under. */
export function batchField(op: ItemsOp): 'paths' | 'moves' | 'files' {
  return itemsField(op);
}

/** The items of a batch, whatever its op, as the paths they name first (the answer's `path`s). */
export function batchPaths(b: Batch): string[] {
  if ('paths' in b) return b.paths;
  if ('moves' in b) return b.moves.map((m) => m.from);
  return b.files.map((f) => f.path);
}

/**
 * The folder every item lies in, as the Job's `--path` (what Felis's ops listing and a holder's
 * message show of it): the longest common run of leading names, `.` when there is none or when a
 * path climbs with `..` (the Job judges every item itself; this only names the batch).
 */
export function commonFolder(b: Batch): string {
  const all = 'moves' in b ? b.moves.flatMap((m) => [m.from, m.to]) : batchPaths(b);
  let common: string[] | undefined;
  for (const p of all) {
    const segs = p.split('/').filter((s) => s !== '' && s !== '.');
    if (p.startsWith('/') || segs.includes('..')) return '.';
    const folder = segs.slice(0, -1);
    if (!common) common = folder;
    let n = 0;
    while (n < common.length && n < folder.length && common[n] === folder[n]) n++;
    common = common.slice(0, n);
    if (common.length === 0) return '.';
  }
  return common && common.length > 0 ? common.join('/') : '.';
}

/** Whether the items fit one Job's spec (MAX_BATCH_ENV_CHARS of their encoding). */
export function fitsOneJob(b: Batch): boolean {
  return encodeBatchEnv(b) !== undefined;
}

export function isBatchOp(op: string): op is BatchOp {
  return opHas(op, 'batch');
}

/** Whether an op's Job carries items in FELIS_BATCH_* (a many-file op, or compress). */
export function carriesItems(op: string): op is ItemsOp {
  return opHas(op, 'items');
}

export class BatchEnvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BatchEnvError';
  }
}

/** The env vars that carry `batch`, PARTS first; undefined when it encodes past MAX_BATCH_ENV_CHARS. */
export function encodeBatchEnv(batch: Batch): EnvVar[] | undefined {
  const b64 = gzipSync(Buffer.from(JSON.stringify(batch))).toString('base64');
  if (b64.length > MAX_BATCH_ENV_CHARS) return undefined;
  const n = Math.ceil(b64.length / CONTENT_PART_CHARS);
  const out: EnvVar[] = [{ name: BATCH_PARTS_ENV, value: String(n) }];
  for (let i = 0; i < n; i++) out.push({ name: BATCH_PART_ENV_PREFIX + i, value: b64.slice(i * CONTENT_PART_CHARS, (i + 1) * CONTENT_PART_CHARS) });
  return out;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads `op`'s items from an env; throws BatchEnvError when they are missing or not its shape. */
export function decodeBatchEnv(op: ItemsOp, env: Record<string, string | undefined>): Batch {
  const raw = env[BATCH_PARTS_ENV];
  if (raw === undefined || !/^[0-9]{1,4}$/.test(raw)) throw new BatchEnvError(`${BATCH_PARTS_ENV} is not set or not a count`);
  const parts: string[] = [];
  for (let i = 0; i < Number(raw); i++) {
    const part = env[BATCH_PART_ENV_PREFIX + i];
    if (part === undefined) throw new BatchEnvError(`${BATCH_PART_ENV_PREFIX}${i} is not set (${BATCH_PARTS_ENV}=${raw})`);
    parts.push(part);
  }
  const b64 = parts.join('');
  if (b64 === '' || !STRICT_BASE64.test(b64)) throw new BatchEnvError('the batch is not valid base64');
  let value: unknown;
  try {
    value = JSON.parse(gunzipSync(Buffer.from(b64, 'base64'), { maxOutputLength: MAX_BATCH_JSON_BYTES }).toString('utf8'));
  } catch (e) {
    throw new BatchEnvError(`the batch cannot be read: ${(e as Error).message}`);
  }
  const field = batchField(op);
  const items = isObject(value) ? value[field] : undefined;
  if (!Array.isArray(items) || items.length === 0 || items.length > MAX_BATCH_ITEMS) throw new BatchEnvError(`the batch has no ${field} list of 1 to ${MAX_BATCH_ITEMS} items`);
  const ok =
    field === 'paths'
      ? items.every(isString)
      : field === 'moves'
        ? items.every((m) => isObject(m) && isString(m.from) && isString(m.to))
        : items.every((f) => isObject(f) && isString(f.path) && isString(f.mode) && MODE.test(f.mode));
  if (!ok) throw new BatchEnvError(`the batch's ${field} are not the shape ${op} takes`);
  return { [field]: items } as Batch;
}

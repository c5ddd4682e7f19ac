/**
 * Whether a copy is known to be a background one before any Job runs. The function cannot stat the
 * volume; a browse session that already serves the world can, for the price of one call to its Pod
 * (never a Job: none is started for this). The source's folder is listed with the source's name as
 * the filter, and the copy goes straight to the background only when the entry with exactly that
 * name is a folder (not a link) or a regular file over the sync limit. Anything less certain — no
 * session serving, the entry not on the page, a link, an answer that is not a listing — is
 * "unknown": the sync Job decides, as it always did. The decision only chooses 200 or 202; the
 * background op applies every rule itself, so an entry changed in between is still copied right.
 * @module
 */
import { posix } from 'node:path';
import { pathNamesWorkingFile } from '../../lib/protocol/working-names.ts';

/** The source as its folder (`''`: the root) and its name, or undefined for a path not worth asking about. */
export function sourceAt(path: string): { folder: string; name: string } | undefined {
  // A `..` is resolved by the Job after the links before it, which plain text cannot: not asked.
  if (path.split('/').includes('..')) return undefined;
  const n = posix.normalize(path).replace(/\/+$/, '');
  if (n === '' || n === '.' || n.startsWith('/') || pathNamesWorkingFile(n)) return undefined;
  const name = posix.basename(n);
  const folder = posix.dirname(n);
  return { folder: folder === '.' ? '' : folder, name };
}

interface Entry {
  name?: unknown;
  size?: unknown;
  is_dir?: unknown;
  is_symlink?: unknown;
}

/** From a listing's Result payload: true only when `name` is there as a folder or a regular file over `maxBytes`. */
export function backgroundFromListing(payload: string, name: string, maxBytes: number): boolean {
  let r: { code?: unknown; entries?: unknown };
  try {
    r = JSON.parse(payload) as typeof r;
  } catch {
    return false;
  }
  if (!r || typeof r !== 'object' || r.code !== undefined || !Array.isArray(r.entries)) return false;
  const e = (r.entries as Entry[]).find((x) => x && x.name === name);
  if (e?.is_symlink !== false) return false;
  if (e.is_dir === true) return true;
  return e.is_dir === false && typeof e.size === 'number' && e.size > maxBytes;
}

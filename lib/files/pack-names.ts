/**
 * What `files/compress` accepts before any Job exists, and what its Job checks again: the formats a
 * selection can be packed as, the archive's name, and the selection itself (1 to the batch limit
 * of paths inside the world, all in one folder, none twice, not the root, no working name). Pure:
 * the function and the Job program share it, so both judge a selection by the same rules.
 * @module
 */
import { DomainError } from '../errors.ts';
import type { PackFormat } from '../protocol/pack-format.ts';
import { isWorkingName } from '../protocol/working-names.ts';
import { pathRefusal, worldPath } from '../protocol/world-path.ts';
import { BadNameError, checkNameField } from './name-field.ts';

export { isPackFormat, PACK_FORMATS, type PackFormat } from '../protocol/pack-format.ts';

/**
 * The endings (any case) a new archive's name may have for each format: the long one first (the
 * default name's), then the short one tools also write (`.tgz`, `.txz`, `.tzst`), since the
 * extraction recognises both.
 */
export const PACK_ENDINGS: Record<PackFormat, readonly string[]> = {
  zip: ['.zip'],
  'tar.gz': ['.tar.gz', '.tgz'],
  'tar.xz': ['.tar.xz', '.txz'],
  'tar.zst': ['.tar.zst', '.tzst'],
};

/**
 * A new archive's name for `format`: one new file's name by the name rule (no slash: it lands in
 * the selection's folder), not a working name, ending (any case) in one of the format's endings
 * with something before it. Throws BadNameError (400 bad_name) otherwise.
 */
export function checkArchiveName(name: string, format: PackFormat): string {
  checkNameField('the archive name', name);
  const lower = name.toLowerCase();
  const endings = PACK_ENDINGS[format];
  if (!endings.some((e) => lower.endsWith(e) && name.length > e.length)) throw new BadNameError(`the archive name must end in ${endings.join(' or ')} for format ${format}`);
  if (isWorkingName(name)) throw new BadNameError('the archive name is a name reserved for working files');
  return name;
}

/** `archive-<UTC yyyy-mm-ddThhmmss>.<ending>`: the name an archive gets when none is given. */
export function defaultArchiveName(format: PackFormat, now: Date): string {
  const t = now.toISOString(); // 2026-12-02T06:37:55.123Z
  return `archive-${t.slice(0, 10)}T${t.slice(11, 13)}${t.slice(14, 16)}${t.slice(17, 19)}${PACK_ENDINGS[format][0]}`;
}

/** A selection that is not one folder's (400 mixed_folders), with the first path that differs. */
export class MixedFoldersError extends DomainError {
  constructor(first: string, other: string, path: string) {
    super('mixed_folders', 'invalid', `every path must be in one folder: ${path} is in ${other}, the first path in ${first}`, { details: { path } });
    this.name = 'MixedFoldersError';
  }
}

/** A path of a selection no archive can take (400 bad_path), named in the details. */
export class SelectionPathError extends DomainError {
  constructor(path: string, why: string) {
    super('bad_path', 'invalid', pathRefusal(path, why), { details: { path } });
    this.name = 'SelectionPathError';
  }
}

export interface Selection {
  /** The folder every path is in (`.` for the world's root), where the archive goes. */
  folder: string;
  /** Each path as a clean world-relative name (`plugins/Essentials`), in the request's order. */
  names: string[];
}

/**
 * The folder of a selection and its clean names (a leading `/` is the world folder, by the one path
 * rule of lib/protocol/world-path.ts), or a throw naming the path as sent: a path that climbs (`..`), the root itself, a working name, the same path twice (`a` and `./a/` are one), or paths in
 * different folders. The count (1 to the batch limit) is the schema's; the Job checks every
 * path's existence and kind itself.
 */
export function selectionOf(paths: readonly string[]): Selection {
  let folder: string | undefined;
  const seen = new Set<string>();
  const names: string[] = [];
  for (const p of paths) {
    const inWorld = worldPath(p);
    if (inWorld.refusal !== undefined) throw new DomainError('bad_path', 'invalid', inWorld.refusal, { details: { path: p } });
    const segs = inWorld.path.split('/').filter((s) => s !== '' && s !== '.');
    if (segs.includes('..')) throw new SelectionPathError(p, 'climbs with .., which a selection cannot');
    if (segs.length === 0) throw new SelectionPathError(p, 'names the world folder itself, which cannot be packed: name what is in it');
    if (segs.some(isWorkingName)) throw new SelectionPathError(p, 'names a working file, which is never packed');
    const name = segs.join('/');
    if (seen.has(name)) throw new SelectionPathError(p, 'is named twice');
    seen.add(name);
    const parent = segs.length === 1 ? '.' : segs.slice(0, -1).join('/');
    if (folder === undefined) folder = parent;
    else if (parent !== folder) throw new MixedFoldersError(folder, parent, p);
    names.push(name);
  }
  if (folder === undefined) throw new DomainError('bad_path', 'invalid', 'nothing to pack: give at least one path', { details: { path: '.' } });
  return { folder, names };
}

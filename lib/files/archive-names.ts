/**
 * What the archive routes accept before any Job exists: an archive to extract must be named as one
 * of the formats the Job reads (its ending, any case, decides which), and a name for a new archive
 * must be one new `.zip` file name. Pure; the Job still judges the paths themselves (containment,
 * existence, types).
 * @module
 */
import { DomainError } from '../errors.ts';
import { BadNameError, checkNameField } from './name-field.ts';

/** A path the archive routes cannot extract (→ 400 bad_path with this message). */
export class ArchiveNameError extends DomainError {
  constructor(message: string) {
    super('bad_path', 'invalid', message);
    this.name = 'ArchiveNameError';
  }
}

/**
 * Every format the Job program extracts. `gz`, `bz2`, `xz` and `zst` are single compressed files
 * (extracted to the name without the ending); the others are archives of entries.
 */
export type ArchiveFormat = 'zip' | 'tar' | 'tar.gz' | 'tar.bz2' | 'tar.xz' | 'tar.zst' | '7z' | 'rar' | 'gz' | 'bz2' | 'xz' | 'zst';

/**
 * Each ending (lower case) and the format it names, longest first: the first that matches wins,
 * so `a.tar.gz` is a tar and `a.gz` a single file. Only what the Job can read: a route that took
 * an ending the Job cannot read would answer 202 for an op certain to fail.
 */
export const ARCHIVE_ENDINGS: readonly (readonly [string, ArchiveFormat])[] = [
  ['.tar.bz2', 'tar.bz2'],
  ['.tar.zst', 'tar.zst'],
  ['.tar.gz', 'tar.gz'],
  ['.tar.xz', 'tar.xz'],
  ['.tbz2', 'tar.bz2'],
  ['.tzst', 'tar.zst'],
  ['.tar', 'tar'],
  ['.tgz', 'tar.gz'],
  ['.txz', 'tar.xz'],
  ['.zip', 'zip'],
  ['.bz2', 'bz2'],
  ['.zst', 'zst'],
  ['.7z', '7z'],
  ['.gz', 'gz'],
  ['.rar', 'rar'],
  ['.xz', 'xz'],
];

/** The formats that are one compressed file rather than an archive of entries. */
export const SINGLE_FILE_FORMATS: ReadonlySet<ArchiveFormat> = new Set(['gz', 'bz2', 'xz', 'zst']);

/** The route's refusal for a name of no format it extracts. */
export const UNSUPPORTED_ARCHIVE_MESSAGE =
  'only a .zip, .tar, .tar.gz/.tgz, .tar.bz2/.tbz2, .tar.xz/.txz, .tar.zst/.tzst, .7z or .rar archive, or a single .gz, .bz2, .xz or .zst file, can be extracted';

/** The matching ending and its format, or undefined. */
function match(path: string): { ending: string; format: ArchiveFormat } | undefined {
  const p = path.toLowerCase();
  for (const [ending, format] of ARCHIVE_ENDINGS) if (p.endsWith(ending)) return { ending, format };
  return undefined;
}

/**
 * The format an archive's name says it is (any case), or undefined when it names none. A single
 * compressed file must have a name before its ending (`.gz` alone, or `maps/.xz`, would extract to
 * no name at all).
 */
export function archiveFormat(path: string): ArchiveFormat | undefined {
  const m = match(path);
  if (!m) return undefined;
  if (SINGLE_FILE_FORMATS.has(m.format)) {
    const base = path.slice(path.lastIndexOf('/') + 1);
    if (base.length <= m.ending.length) return undefined;
  }
  return m.format;
}

/**
 * The name a single compressed file extracts to: its base name without the ending
 * (`logs/Latest.LOG.GZ` → `Latest.LOG`). Undefined for an archive of entries.
 */
export function singleFileTarget(path: string): string | undefined {
  const format = archiveFormat(path);
  if (format === undefined || !SINGLE_FILE_FORMATS.has(format)) return undefined;
  const base = path.slice(path.lastIndexOf('/') + 1);
  return base.slice(0, base.length - match(base)!.ending.length);
}

export function isArchivePath(path: string): boolean {
  return archiveFormat(path) !== undefined;
}

/** Throws ArchiveNameError unless `path` ends in an archive ending (`maps/A.ZIP`, `b.TGZ`, `c.rar`, `log.gz` yes; `a.zip.bak`, `.gz` no). */
export function requireArchivePath(path: string): string {
  if (!isArchivePath(path)) throw new ArchiveNameError(UNSUPPORTED_ARCHIVE_MESSAGE);
  return path;
}

/**
 * A new archive's name: one new file's name by the name rule (lib/files/name-field.ts), ending in
 * `.zip` with something before it. Throws BadNameError (400 bad_name) otherwise.
 */
export function checkZipName(name: string): string {
  checkNameField('the archive name', name);
  if (!name.toLowerCase().endsWith('.zip') || name.length === '.zip'.length) throw new BadNameError('the archive name must end in .zip');
  return name;
}

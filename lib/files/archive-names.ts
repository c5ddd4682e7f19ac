/**
 * What the archive routes accept before any Job exists: an archive to extract must be named as one
 * of the formats the Job reads, and a name for a new archive must be one plain `.zip` file name.
 * Pure; the Job still judges the paths themselves (containment, existence, types).
 * @module
 */
import { DomainError } from '../errors.ts';

/** A path or name the archive routes cannot take (→ 400 bad_path with this message). */
export class ArchiveNameError extends DomainError {
  constructor(message: string) {
    super('bad_path', 'invalid', message);
    this.name = 'ArchiveNameError';
  }
}

/**
 * The endings (any case) the Job program extracts; the ending decides the format. Only what it can
 * read: a route that took `.rar` would answer 202 for an op certain to fail.
 */
export const ARCHIVE_ENDINGS = ['.zip', '.tar', '.tar.gz', '.tgz'] as const;

export type ArchiveFormat = 'zip' | 'tar' | 'tar.gz' | '7z' | 'rar';

/** The format an archive's name says it is (any case), or undefined when it names none. */
export function archiveFormat(path: string): ArchiveFormat | undefined {
  const p = path.toLowerCase();
  if (p.endsWith('.zip')) return 'zip';
  if (p.endsWith('.tar')) return 'tar';
  if (p.endsWith('.tar.gz') || p.endsWith('.tgz')) return 'tar.gz';
  if (p.endsWith('.7z') || p.endsWith('.rar')) return p.endsWith('.7z') ? '7z' : 'rar';
  return undefined;
}

const NAME_MAX = 255;

export function isArchivePath(path: string): boolean {
  return archiveFormat(path) !== undefined;
}

/** Throws ArchiveNameError unless `path` ends in an archive ending (`maps/A.ZIP`, `b.TGZ` yes, `a.zip.bak`, `c.rar` no). */
export function requireArchivePath(path: string): string {
  if (!isArchivePath(path)) throw new ArchiveNameError('only a .zip, .tar, .tar.gz or .tgz file can be extracted');
  return path;
}

/**
 * A new archive's name: one file name (no slash; it lands next to what is packed), not `.` or
 * `..`, at most 255 bytes, no NUL, ending in `.zip`. Throws ArchiveNameError otherwise.
 */
export function checkZipName(name: string): string {
  const bad = (why: string) => new ArchiveNameError(`the archive name ${why}`);
  if (name.includes('\0')) throw bad('cannot contain a NUL byte');
  if (name.includes('/')) throw bad('must be a file name without a folder: the archive is written next to what it packs');
  if (Buffer.byteLength(name) > NAME_MAX) throw bad('is longer than 255 bytes');
  if (!name.toLowerCase().endsWith('.zip') || name.length === '.zip'.length) throw bad('must end in .zip');
  return name;
}

/**
 * Archive entry names and kinds, judged one entry at a time (pure: no I/O). An entry name is hostile
 * input: it is decoded, normalised and either accepted as a clean relative path below the
 * destination, skipped (`__MACOSX` resource forks) or refused with the code and the name as the
 * caller will see it.
 *
 * @module
 */
import { clean, leadsOutside } from '../pathutil.ts';
import { isWorkingName } from '../working-files.ts';
import { isWorkFolderName } from './work-folder.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const gb18030 = new TextDecoder('gb18030');

/**
 * Entry names are bytes. Valid UTF-8 is taken as UTF-8 whatever the archive's flag says (many
 * tools set no flag); anything else is taken as GB18030, the superset of GBK that Chinese Windows
 * zip tools write.
 */
export function decodeName(raw: Buffer): string {
  try {
    return utf8.decode(raw);
  } catch {
    return gb18030.decode(raw);
  }
}

/** What an entry's header says it is. */
export type EntryKind = 'file' | 'dir' | 'symlink' | 'hardlink' | 'special';

/** An entry's kind and permission bits when its format states them directly (tar), not as zip's attributes. */
export interface Typed {
  kind: EntryKind;
  perm: number;
}

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;

/** Hosts ("version made by" high byte) whose external attributes carry a Unix mode. */
const UNIX_HOSTS = new Set([3, 19]); // Unix, OS X
/** Hosts whose external attributes are MS-DOS attribute bits. */
const DOS_HOSTS = new Set([0, 11, 14]); // FAT, NTFS, VFAT

export interface HeaderFacts {
  /** The "version made by" field of the central directory record. */
  versionMadeBy: number;
  /** The external file attributes of the central directory record (unsigned 32-bit). */
  externalAttributes: number;
  /** The decoded name, before any normalisation. */
  name: string;
}

/** Kind and permission bits from the central directory record, as zip tools record them. */
export function entryKind(h: HeaderFacts): { kind: EntryKind; perm: number } {
  const host = h.versionMadeBy >>> 8;
  let kind: EntryKind = 'file';
  let perm = 0o644;
  if (UNIX_HOSTS.has(host)) {
    const mode = h.externalAttributes >>> 16;
    perm = mode & 0o777;
    const fmt = mode & S_IFMT;
    // A zero type is what writers that only store permissions produce: a regular file.
    if (fmt === S_IFDIR) kind = 'dir';
    else if (fmt === S_IFLNK) kind = 'symlink';
    else if (fmt !== 0 && fmt !== S_IFREG) kind = 'special';
  } else if (DOS_HOSTS.has(host)) {
    if (h.externalAttributes & 0x10) kind = 'dir';
  }
  if (kind === 'file' && h.name.endsWith('/')) kind = 'dir';
  return { kind, perm };
}

/** The mode an extracted file gets: executable for anyone if any execute bit is set, else 0644. */
export function fileMode(perm: number): number {
  return perm & 0o111 ? 0o755 : 0o644;
}

export type Judged =
  | { action: 'skip' }
  | { action: 'dir'; name: string }
  | { action: 'file'; name: string; mode: number }
  | { action: 'refuse'; code: 'archive_unsafe' | 'archive_symlink'; entry: string; error: string };

const DRIVE = /^[A-Za-z]:/;

/** True when the (backslash-normalised) name is unsafe: it could land outside the destination. */
export function isUnsafeName(n: string): boolean {
  return n === '' || n.includes('\0') || n.startsWith('/') || DRIVE.test(n) || leadsOutside(clean(n));
}

export function leadsOutsideMessage(entry: string): string {
  return `${entry} leads outside the folder it would be extracted into`;
}

/**
 * Judges one entry, by zip's "version made by" and external attributes, or by `typed` when the
 * format states kind and permissions itself (tar). The first refusal in archive order wins, so the
 * caller stops at one. Order of the rules: unsafe names, `__MACOSX`, symlinks, directories, hard
 * links, other special files, a file that names the destination itself.
 */
export function judgeEntry(rawName: Buffer, versionMadeBy: number, externalAttributes: number, typed?: Typed): Judged {
  const entry = decodeName(rawName).replaceAll('\\', '/');
  if (isUnsafeName(entry)) {
    return { action: 'refuse', code: 'archive_unsafe', entry, error: leadsOutsideMessage(entry) };
  }
  const name = clean(entry);
  if (name === '__MACOSX' || name.startsWith('__MACOSX/')) return { action: 'skip' };
  // The editor's working names are hidden from every op and swept as leftovers: an archive
  // must not plant files under them.
  if (name.split('/').some((c) => isWorkingName(c) || isWorkFolderName(c))) {
    return { action: 'refuse', code: 'archive_unsafe', entry, error: `${entry} uses a name reserved for the editor's working files` };
  }
  const facts = typed ?? entryKind({ versionMadeBy, externalAttributes, name: entry });
  const perm = facts.perm;
  // A name ending in '/' is a folder whatever the header says, as zip tools and old tars have it.
  const kind = facts.kind === 'file' && entry.endsWith('/') ? 'dir' : facts.kind;
  if (kind === 'symlink') {
    return { action: 'refuse', code: 'archive_symlink', entry, error: `${entry} is a symbolic link; links are never extracted` };
  }
  if (kind === 'dir') return name === '.' ? { action: 'skip' } : { action: 'dir', name };
  if (kind === 'hardlink') {
    return { action: 'refuse', code: 'archive_unsafe', entry, error: `${entry} is a hard link; links are never extracted` };
  }
  if (kind === 'special') {
    return { action: 'refuse', code: 'archive_unsafe', entry, error: `${entry} is not a regular file` };
  }
  if (name === '.') {
    return { action: 'refuse', code: 'archive_unsafe', entry, error: `${entry} names the folder it would be extracted into` };
  }
  return { action: 'file', name, mode: fileMode(perm) };
}

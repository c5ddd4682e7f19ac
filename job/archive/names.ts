/**
 * Archive entry names and kinds, judged one entry at a time (pure: no I/O). An entry name is hostile
 * input: it is decoded, normalised and either accepted as a clean relative path below the
 * destination, skipped (`__MACOSX` resource forks) or refused with the code and the name as the
 * caller will see it.
 *
 * Names are held to the limits of the name rule (lib/protocol/names.ts), so a name the volume
 * cannot hold is refused before anything is placed rather than failing the extraction part way: no
 * NUL, no name part over 255 bytes, and a path that fits PATH_MAX where it lands (`entryPathMax`).
 * Not to the rule's characters: an archive is what players and plugins already have, and what it
 * holds is theirs to name as their filesystems let them (docs/archives.md).
 *
 * @module
 */
import { NAME_MAX, PATH_MAX, shownName } from '../../lib/protocol/names.ts';
import { isWorkingName } from '../runtime/working-files.ts';
import { clean, leadsOutside } from '../volume/pathutil.ts';
import { isWorkFolderName } from '../volume/work-folder.ts';

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
 * What the extraction adds to an entry's path when it spells it for the kernel, at most:
 * `/proc/self/fd/<fd>/.felis-unzip-<12 hex>/new/` and the terminating NUL PATH_MAX counts. Those
 * spellings must fit PATH_MAX as well, or a move would fail half way through the placement.
 */
export const WORK_SPELLING_BYTES = 64;

/**
 * The longest path (in bytes) an entry may have when it is extracted into `destRel` (`.` for the
 * world's root): its path in the world stays within PATH_MAX, where every route can still name it,
 * and so does the extraction's own spelling of it.
 */
export function entryPathMax(destRel: string): number {
  const dest = destRel === '.' || destRel === '' ? 0 : Buffer.byteLength(destRel) + 1;
  return PATH_MAX - Math.max(dest, WORK_SPELLING_BYTES);
}

/** At most this much of a long name is repeated in a message (the refusal's `entry` has all of it). */
const SHOWN_BYTES = 200;

function clipped(entry: string): string {
  const b = Buffer.from(entry);
  return b.length <= SHOWN_BYTES
    ? entry
    : `${b
        .subarray(0, SHOWN_BYTES)
        .toString()
        .replace(/\uFFFD$/, '')}…`;
}

/** Why the volume cannot hold the clean name `name` below the destination, or undefined. */
function lengthFault(entry: string, name: string, pathMax: number): string | undefined {
  const long = name.split('/').find((part) => Buffer.byteLength(part) > NAME_MAX);
  if (long !== undefined) return `${clipped(entry)} has a name of ${Buffer.byteLength(long)} bytes; a file or folder name has at most ${NAME_MAX}`;
  const bytes = Buffer.byteLength(name);
  if (bytes > pathMax) return `${clipped(entry)} has a path of ${bytes} bytes; extracted here a path has at most ${pathMax}`;
  return undefined;
}

/**
 * Judges one entry, by zip's "version made by" and external attributes, or by `typed` when the
 * format states kind and permissions itself (tar). The first refusal in archive order wins, so the
 * caller stops at one. Order of the rules: a NUL, unsafe names, names the volume cannot hold (a
 * part over 255 bytes, a path over `pathMax` bytes: `entryPathMax` of the destination),
 * `__MACOSX`, symlinks, directories, hard links, other special files, a file that names the
 * destination itself.
 */
export function judgeEntry(rawName: Buffer, versionMadeBy: number, externalAttributes: number, typed?: Typed, pathMax: number = PATH_MAX): Judged {
  const entry = decodeName(rawName).replaceAll('\\', '/');
  // A NUL ends a name for the kernel (and for some readers, which would extract `a\0b` as `a`).
  if (entry.includes('\0')) {
    return { action: 'refuse', code: 'archive_unsafe', entry, error: `${shownName(clipped(entry))} has a NUL byte in its name, which no file name can hold` };
  }
  if (isUnsafeName(entry)) {
    return { action: 'refuse', code: 'archive_unsafe', entry, error: leadsOutsideMessage(entry) };
  }
  const name = clean(entry);
  const tooLong = lengthFault(entry, name, pathMax);
  if (tooLong) return { action: 'refuse', code: 'archive_unsafe', entry, error: tooLong };
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

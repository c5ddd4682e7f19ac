/**
 * Which reader each archive format is read with: one case per format. Every reader loads only
 * when its format is extracted (a dynamic import), so no other Job pays for it.
 *
 * A tar in gzip, zstd or xz is decoded as it is read, once per pass. A tar in bzip2 cannot be: its
 * decoder runs synchronously (`bzip2.ts`), so the first pass decodes it once into the working
 * folder (`decoded.tar`, counted against the volume's free space) and every pass reads that file.
 *
 * @module
 */
import fs from 'node:fs';
import type { ArchiveFormat } from '../../lib/files/archive-names.ts';
import type { ArchivePass } from './pass.ts';
import { ZipPass } from './zip-reader.ts';

/** How each format is named in a refusal ("… is not a readable <name> archive"). */
export const FORMAT_NAMES: Record<ArchiveFormat, string> = {
  zip: 'zip',
  tar: 'tar',
  'tar.gz': 'gzipped tar',
  'tar.bz2': 'bzip2-compressed tar',
  'tar.xz': 'xz-compressed tar',
  'tar.zst': 'zstd-compressed tar',
  '7z': '7z',
  rar: 'rar',
  gz: 'gzip',
  bz2: 'bzip2',
  xz: 'xz',
  zst: 'zstd',
};

/** What a pass may use besides the archive: the private working folder and the room left. */
export interface PassScratch {
  /** The working folder (a path), removed with everything in it when the op ends. */
  readonly dir: string;
  /** Bytes the volume can still take, or undefined when that cannot be known. */
  room(): number | undefined;
  /** Set by the first pass that decodes the archive into the working folder. */
  decoded?: string;
}

/** Thrown when what an archive decodes to would not fit in the room left (→ `no_space`). */
export class OutOfRoom extends Error {
  readonly room: number;
  constructor(room: number) {
    super(`the decompressed data needs more than the ${room} bytes the server's volume has free`);
    this.name = 'OutOfRoom';
    this.room = room;
  }
}

/**
 * Opens one pass over the archive `archiveFd` holds (left open: the caller owns it). `withData`:
 * the pass will read entries' data (7-Zip then runs its extraction beside its listing).
 */
export async function openPass(format: ArchiveFormat, archiveFd: number, scratch: PassScratch, withData = false): Promise<ArchivePass> {
  switch (format) {
    case 'zip':
      return ZipPass.open(archiveFd);
    case 'tar':
      return (await import('./tar-reader.ts')).TarPass.open(archiveFd);
    case 'tar.gz':
      return (await import('./tar-reader.ts')).TarPass.open(archiveFd, 'gzip');
    case 'tar.xz':
      return (await import('./tar-reader.ts')).TarPass.open(archiveFd, 'xz');
    case 'tar.zst':
      return (await import('./tar-reader.ts')).TarPass.open(archiveFd, 'zstd');
    case 'tar.bz2':
      return openDecodedBzip2Tar(archiveFd, scratch);
    case '7z':
    case 'rar':
      return (await import('./sevenzip-pass.ts')).SevenZipPass.open(archiveFd, format, withData);
    case 'gz':
    case 'bz2':
    case 'xz':
    case 'zst':
      throw new Error(`a single ${format} file is one entry, not an archive to pass over`);
  }
}

async function openDecodedBzip2Tar(archiveFd: number, scratch: PassScratch): Promise<ArchivePass> {
  const { TarPass } = await import('./tar-reader.ts');
  if (scratch.decoded === undefined) {
    const path = `${scratch.dir}/decoded.tar`;
    const room = scratch.room();
    const fd = fs.openSync(path, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
    try {
      let n = 0;
      const { bunzip2 } = await import('./bzip2.ts');
      await bunzip2(archiveFd, (piece) => {
        n += piece.length;
        if (room !== undefined && n > room) throw new OutOfRoom(room);
        for (let off = 0; off < piece.length; ) off += fs.writeSync(fd, piece, off, piece.length - off);
      });
    } finally {
      fs.closeSync(fd);
    }
    scratch.decoded = path;
  }
  const fd = fs.openSync(scratch.decoded, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    return await TarPass.open(fd);
  } finally {
    fs.closeSync(fd); // TarPass reads through its own open
  }
}

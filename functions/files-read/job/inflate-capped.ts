/**
 * A gzip file's text, inflated up to a bound and never further: the read of `decompress=true`.
 * The compressed bytes are read from the fd in blocks and inflated as a stream that is dropped as
 * soon as one byte past the bound came out, so a gzip bomb costs at most the bound (and a block)
 * of memory and of work, whatever it would inflate to. Concatenated members read as one text, as
 * `gzip -d` reads them.
 * @module
 */
import fs from 'node:fs';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';

/** The gzip magic (RFC 1952): what decides, not the file's name. */
export const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);
const BLOCK = 64 << 10;

export type Inflated = { text: Buffer; truncated: boolean } | { damaged: string } | { notGzip: true };

/** Does the file at `fd` start with the gzip magic (read at position 0, the fd's offset untouched)? */
export function isGzip(fd: number): boolean {
  const head = Buffer.alloc(2);
  return fs.readSync(fd, head, 0, 2, 0) === 2 && head.equals(GZIP_MAGIC);
}

/** The compressed bytes from position 0, a block at a time, read only as the inflater asks. */
function* blocks(fd: number): Generator<Buffer> {
  let pos = 0;
  for (;;) {
    const buf = Buffer.allocUnsafe(BLOCK);
    const n = fs.readSync(fd, buf, 0, BLOCK, pos);
    if (n === 0) return;
    pos += n;
    yield buf.subarray(0, n);
  }
}

/** At most `max` bytes of the inflated text, and whether there was more; `damaged` with zlib's reason when the data breaks off or is corrupt. */
export async function inflateCapped(fd: number, max: number): Promise<Inflated> {
  if (!isGzip(fd)) return { notGzip: true };
  const src = Readable.from(blocks(fd), { objectMode: false, highWaterMark: BLOCK });
  const gz = zlib.createGunzip({ chunkSize: BLOCK });
  const out: Buffer[] = [];
  let n = 0;
  src.on('error', (e) => gz.destroy(e));
  src.pipe(gz);
  try {
    for await (const chunk of gz as AsyncIterable<Buffer>) {
      out.push(chunk);
      n += chunk.length;
      if (n > max) break; // one byte past the bound says `truncated`; nothing more is inflated
    }
  } catch (e) {
    return { damaged: (e as Error).message };
  } finally {
    src.unpipe(gz);
    src.destroy();
    gz.destroy();
  }
  const all = Buffer.concat(out, n);
  return n > max ? { text: all.subarray(0, max), truncated: true } : { text: all, truncated: false };
}

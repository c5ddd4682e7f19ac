/**
 * Test and bench helper (never shipped): compresses a buffer in each format the Job decodes, with
 * the same libraries it decodes with (no system binary): zlib for gzip and zstd, liblzma's wasm
 * build for xz, 7-Zip's wasm build for bzip2.
 *
 * @module
 */
import zlib from 'node:zlib';
import { startSevenZip } from './sevenzip-wasm.ts';

export type Codec = 'gzip' | 'bzip2' | 'xz' | 'zstd';

export async function compress(codec: Codec, data: Buffer, opts: { xzPreset?: number } = {}): Promise<Buffer> {
  switch (codec) {
    case 'gzip':
      return zlib.gzipSync(data, { level: 6 });
    case 'zstd':
      // With the content checksum, as the zstd tool writes by default.
      return zlib.zstdCompressSync(data, { params: { [zlib.constants.ZSTD_c_checksumFlag]: 1 } });
    case 'xz': {
      const { xzAsync } = await import('node-liblzma/wasm');
      const { loadXz } = await import('./xz.ts');
      await loadXz();
      return Buffer.from(await xzAsync(data, { preset: opts.xzPreset ?? 6 }));
    }
    case 'bzip2':
      return bzip2(data);
  }
}

/** bzip2 through 7-Zip (`a -tbzip2 -si -so`): stdin from the buffer, stdout gathered. */
async function bzip2(data: Buffer): Promise<Buffer> {
  let at = 0;
  const out: Buffer[] = [];
  let buf = Buffer.allocUnsafe(1 << 20);
  let len = 0;
  const sz = await startSevenZip({
    stdin: () => (at < data.length ? data[at++]! : (null as unknown as number)),
    stdout: (c) => {
      buf[len++] = c;
      if (len === buf.length) {
        out.push(buf);
        buf = Buffer.allocUnsafe(1 << 20);
        len = 0;
      }
    },
    stderr: () => {},
    print: () => {},
    printErr: () => {},
  });
  const exitCode = process.exitCode; // 7-Zip's exit sets it
  sz.callMain(['a', '-tbzip2', '-si', '-so', '-bd', '-bso0', '-bsp0', '-mx=1', 'data']);
  process.exitCode = exitCode;
  out.push(buf.subarray(0, len));
  const r = Buffer.concat(out);
  if (r.length < 10 || r.subarray(0, 3).toString('latin1') !== 'BZh') throw new Error('7-Zip wrote no bzip2 stream');
  return r;
}

/**
 * Reading a file's first bytes up to a bound, for a read and for what packs or sends a file whole,
 * and the digest a read answers and a write checks.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';

/** Reads at most `max` bytes from `fd` (stops early at EOF). */
export function readCapped(fd: number, max: number): Buffer {
  const buf = Buffer.allocUnsafe(max);
  let n = 0;
  while (n < max) {
    const got = fs.readSync(fd, buf, n, max - n, null);
    if (got === 0) break;
    n += got;
  }
  return buf.subarray(0, n);
}

export function sha256Hex(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

/**
 * The job-key guard of every serving mode: a caller presents the Job's token as `Authorization:
 * Bearer <token>`, and the Pod, which holds only the token's SHA-256 (the Job spec carries no
 * more), compares digests in constant time.
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** The digest a caller's token must hash to; throws unless `tokenSha256` is 64 lowercase hex. */
export function tokenDigest(tokenSha256: string): Buffer {
  if (!/^[0-9a-f]{64}$/.test(tokenSha256)) throw new Error('the token digest must be 64 lowercase hex characters');
  return Buffer.from(tokenSha256, 'hex');
}

/** Does the `Authorization` header carry the token whose SHA-256 is `expected`? Constant time. */
export function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  if (!header?.startsWith('Bearer ')) return false;
  const digest = createHash('sha256').update(header.slice('Bearer '.length)).digest();
  return digest.length === expected.length && timingSafeEqual(digest, expected);
}

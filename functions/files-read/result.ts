/**
 * files-read's result: a file's bytes and their hashes, decoded from the Job's Result and checked
 * against the hash it carries. Pure; the function's side only (never bundled into the Job program).
 * @module
 */
import { createHash } from 'node:crypto';
import { ReadDamagedError } from '../../lib/files/errors.ts';
import { checkResult } from '../../lib/files/result-check.ts';
import type { Result } from '../../lib/protocol/result.ts';

export interface ReadFile {
  content: Buffer;
  /** SHA-256 of the bytes on disk (before redaction): what a later write sends as expect_sha256. */
  sha256: string;
  /** SHA-256 of `content`, as sent. */
  contentSha256: string;
  /** A decompress read: the inflated text went on past what was sent. */
  truncated?: boolean;
}

/** A read whose bytes do not hash to `content_sha256`, or with none, is damaged (never returned). */
export function decodeRead(r: Result): ReadFile {
  checkResult(r);
  const content = Buffer.from(r.content ?? '', 'base64');
  const got = createHash('sha256').update(content).digest('hex');
  if (!r.content_sha256 || got !== r.content_sha256) throw new ReadDamagedError();
  return { content, sha256: r.sha256 ?? '', contentSha256: got, ...(r.truncated ? { truncated: true } : {}) };
}

/**
 * The token a serving Job accepts: HMAC-SHA256 of the Job's name under a key every function
 * instance shares, so any instance can call any Job without storing anything, and a token for one
 * Job opens no other. The Job spec carries only the token's SHA-256, so reading the Job (which
 * `jobs get` allows) does not reveal it. Browse sessions, upload receivers, export Jobs and
 * streamed writes all use it, and the Job program checks it.
 * @module
 */
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** A key shorter than this is refused: it would make tokens guessable. */
export const MIN_KEY_BYTES = 32;

export function jobToken(key: Buffer, jobName: string): string {
  if (key.length < MIN_KEY_BYTES) throw new Error(`the job key must be at least ${MIN_KEY_BYTES} bytes`);
  return createHmac('sha256', key).update(jobName).digest('hex');
}

export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * The shared key (`FELIS_JOB_KEY_FILE`), read at each use so a rotated key takes effect without a
 * restart.
 */
export function readKey(file: string): Buffer {
  const key = readFileSync(file);
  if (key.length < MIN_KEY_BYTES) throw new Error(`the job key in ${file} is shorter than ${MIN_KEY_BYTES} bytes`);
  return key;
}

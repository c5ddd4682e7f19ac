/**
 * The shared key upload receivers' tokens derive from: the same file as browse sessions'
 * (`FELIS_JOB_KEY_FILE`), read at each use so a rotated key takes effect without a restart.
 * @module
 */
import { readFileSync } from 'node:fs';
import { MIN_KEY_BYTES } from '../browse/token.ts';

export function readKey(file: string): Buffer {
  const key = readFileSync(file);
  if (key.length < MIN_KEY_BYTES) throw new Error(`the job key in ${file} is shorter than ${MIN_KEY_BYTES} bytes`);
  return key;
}

/**
 * files-write's result: the SHA-256 of the file as written, decoded from the Job's Result. Pure;
 * the function's side only (never bundled into the Job program).
 * @module
 */
import { checkResult } from '../../lib/files/result-check.ts';
import type { Result } from '../../lib/protocol/result.ts';

export function decodeWrite(r: Result): string {
  checkResult(r);
  return r.sha256 ?? '';
}

/**
 * files-copy's result: where a synchronous copy landed and what it copied, decoded from the Job's
 * Result. Pure; the function's side only (never bundled into the Job program).
 * @module
 */
import { checkResult } from '../../lib/files/result-check.ts';
import type { Result } from '../../lib/protocol/result.ts';

/** A synchronous copy's outcome: where it landed and the SHA-256 of the copy's bytes. */
export interface Copied {
  to: string;
  sha256: string;
  files: number;
  bytes: number;
  skipped: number;
}

export function decodeCopy(r: Result): Copied {
  checkResult(r);
  return { to: r.to ?? '', sha256: r.sha256 ?? '', files: r.files ?? 0, bytes: r.bytes ?? 0, skipped: r.skipped ?? 0 };
}

/**
 * What every op's decoder does first: turn a Job's Result carrying a code into the typed error the
 * code means. Each op's own decoder, with its result type, is in its function's folder
 * (functions/<fn>/result.ts). Pure.
 * @module
 */
import type { Result } from '../protocol/result.ts';
import { FileEditError, isEditErrorKind, UnknownResultCodeError } from './errors.ts';

/** Throws the error a result code stands for; returns the Result when it is a success. */
export function checkResult(r: Result): Result {
  if (!r.code) return r;
  if (isEditErrorKind(r.code)) throw new FileEditError(r.code, r.error);
  throw new UnknownResultCodeError(r.code, r.error);
}

/**
 * The serving Job programs (upload receivers, export Pods) answer their refusals over HTTP, with
 * a status and a code the function passes on to its caller as they are. This is the kind each
 * such status stands for, so the refusal becomes a domain error whose kind maps back to the very
 * status the Job gave (lib/http/error-map.ts; a test holds the two tables together).
 * @module
 */
import type { ErrorKind } from '../errors.ts';

export const ANSWER_KINDS: Readonly<Record<number, ErrorKind>> = {
  400: 'invalid',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'not_allowed',
  408: 'stalled',
  409: 'conflict',
  410: 'gone',
  411: 'length_required',
  413: 'too_large',
  429: 'busy',
  431: 'headers_too_large',
  507: 'no_space',
};

/** The kind of a Job's refusal status; undefined for a status no caller is answered with. */
export function answerKind(status: number): ErrorKind | undefined {
  return Object.hasOwn(ANSWER_KINDS, status) ? ANSWER_KINDS[status] : undefined;
}

/**
 * Errors as HTTP, in one place: every domain error (lib/errors.ts) has a kind, and each kind one
 * HTTP status; its code and caller message go into the envelope as they are, and the seconds it
 * says to wait into `Retry-After`. Every 429, and every refusal because the world is held, says
 * when to try again: the error's own reckoning, else `DEFAULT_RETRY_AFTER_SECONDS`. Anything that
 * is neither a DomainError nor an ApiError is a 500 whose detail stays in the server log.
 * docs/errors.md is generated from this map and the code catalogue (`npm run errors-doc`).
 * @module
 */
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { DomainError, type ErrorCode, type ErrorKind } from '../errors.ts';

/** The HTTP status of each kind of refusal. */
export const KIND_STATUS = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  not_allowed: 405,
  stalled: 408,
  conflict: 409,
  gone: 410,
  length_required: 411,
  too_large: 413,
  unsatisfiable: 416,
  busy: 429,
  headers_too_large: 431,
  internal: 500,
  damaged: 502,
  unavailable: 503,
  timeout: 504,
  no_space: 507,
} as const satisfies Record<ErrorKind, ContentfulStatusCode>;

export interface Mapped {
  status: ContentfulStatusCode;
  code: string;
  message: string;
  /** The item of many the error is about (its `details.path`), for the envelope's `path`. */
  path?: string;
  /** The op id of a change whose outcome is unknown (its `details.op`), for the envelope's `op`. */
  op?: string;
  /** Whole seconds, for the `Retry-After` header. */
  retryAfter?: number;
}

/** The conflicts that always say when to try again (the world is held), besides every 429. */
export const RETRY_AFTER_CODES: readonly ErrorCode[] = ['maintenance_in_progress', 'world_reclaiming'];

/** `Retry-After` for a refusal that must say when and whose error could not tell. */
export const DEFAULT_RETRY_AFTER_SECONDS = 30;

/** The `Retry-After` seconds of an answer with this status and code, or undefined for none. */
export function retryAfterOf(status: number, code: ErrorCode, own: number | undefined): number | undefined {
  const valid = own !== undefined && Number.isFinite(own) && own >= 0 ? Math.ceil(own) : undefined;
  if (valid !== undefined) return valid;
  return status === 429 || RETRY_AFTER_CODES.includes(code) ? DEFAULT_RETRY_AFTER_SECONDS : undefined;
}

/** A domain error as status, code and caller message; undefined for anything else. */
export function mapDomainError(err: unknown): Mapped | undefined {
  if (!(err instanceof DomainError)) return undefined;
  const { path, op } = err.details ?? {};
  const status = KIND_STATUS[err.errorKind];
  const retryAfter = retryAfterOf(status, err.code, err.retryAfterSeconds);
  return {
    status,
    code: err.code,
    message: err.callerMessage,
    ...(typeof path === 'string' ? { path } : {}),
    ...(typeof op === 'string' ? { op } : {}),
    ...(retryAfter !== undefined ? { retryAfter } : {}),
  };
}

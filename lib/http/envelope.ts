/**
 * The error envelope every route answers with: `{"error":{"code","message","request_id"}}`,
 * compact JSON, newline-terminated, `application/json; charset=utf-8`, as Felis answers. A refusal
 * about one item of many (a batch's first bad path) adds `path`, that item's path, after the rest;
 * a change whose outcome is unknown adds `op`, its op id.
 * @module
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ErrorCode } from '../errors.ts';

/**
 * An error the HTTP edge answers with as it is (a request it cannot read, a caller it does not
 * know). Only lib/http and the functions throw it; everything below throws a DomainError
 * (lib/errors.ts). Its code is one of the catalogue's, so docs/errors.md lists it.
 */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly code: ErrorCode;
  constructor(status: ContentfulStatusCode, code: ErrorCode, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

export const badRequest = (message = 'invalid request') => new ApiError(400, 'bad_request', message);

const JSON_TYPE = 'application/json; charset=utf-8';

/** Writes a JSON body the way every route does. */
export function sendJson(c: Context, status: ContentfulStatusCode, body: unknown): Response {
  return c.body(JSON.stringify(body) + '\n', status, { 'Content-Type': JSON_TYPE });
}

/** What an envelope may add after the request id. */
export interface ErrorExtra {
  /** The item of many the refusal is about. */
  path?: string;
  /** The op id of a change whose outcome is unknown. */
  op?: string;
}

export function sendError(c: Context, status: ContentfulStatusCode, code: string, message: string, extra: ErrorExtra = {}): Response {
  const requestId = (c.get('requestId' as never) as string | undefined) ?? '';
  const { path, op } = extra;
  return sendJson(c, status, { error: { code, message, request_id: requestId, ...(path === undefined ? {} : { path }), ...(op === undefined ? {} : { op }) } });
}

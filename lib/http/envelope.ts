/**
 * The error envelope every route answers with: `{"error":{"code","message","request_id"}}`,
 * compact JSON, newline-terminated, `application/json; charset=utf-8`, as Felis answers.
 * @module
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** An error meant for the caller: its code and message are shown as they are. */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly code: string;
  constructor(status: ContentfulStatusCode, code: string, message: string) {
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

export function sendError(c: Context, status: ContentfulStatusCode, code: string, message: string): Response {
  const requestId = (c.get('requestId' as never) as string | undefined) ?? '';
  return sendJson(c, status, { error: { code, message, request_id: requestId } });
}

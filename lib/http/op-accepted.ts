/**
 * The one way an op's 202 is sent: with `Location`, the op's own URL (`GET …/files/ops/{id}`), a
 * path relative to the API's host, so a caller follows the op it started without looking for it
 * in the listing. Every route that answers 202 with an op sends it here (op-accepted.test.ts
 * holds the table of them).
 * @module
 */
import type { Context } from 'hono';
import { sendJson } from './envelope.ts';

/** The URL path of `server`'s op `id`. */
export function opLocation(server: string, id: string): string {
  return `/api/v1/servers/${encodeURIComponent(server)}/files/ops/${encodeURIComponent(id)}`;
}

/** 202 with `body` (which shows or names the op) and `Location` the op's URL. */
export function sendOpAccepted(c: Context, server: string, id: string, body: unknown): Response {
  c.header('Location', opLocation(server, id));
  return sendJson(c, 202, body);
}

/**
 * The answers every serving mode of the Job program sends: small JSON bodies that are never cached,
 * and a Result exactly as the result line would carry it (the function side parses both:
 * lib/browse, lib/uploads, lib/downloads, lib/files).
 * @module
 */
import type http from 'node:http';
import { formatResultLine, RESULT_PREFIX, type Result } from '../../lib/protocol/result.ts';

/** A small JSON answer that is never cached: every serving mode's replies and refusals. */
export function send(res: http.ServerResponse, status: number, body: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...extra,
  });
  res.end(body);
}

/** `{"error": message}`: the body of every refusal and failure that carries no code. */
export function errorBody(e: unknown): string {
  return JSON.stringify({ error: e instanceof Error ? e.message : String(e) });
}

/** The body of a result line: what the one-shot Job prints after the prefix, without the newline. */
export function resultBody(r: Result): string {
  return formatResultLine(r).slice(RESULT_PREFIX.length, -1);
}

/**
 * One test request the way every caller of the functions makes it: the bearer token, a JSON body
 * (or a raw string), and the answer read as text and, where it is JSON, parsed. The route kit sends
 * it through `app.request()`, the end-to-end stack over HTTP.
 * @module
 */
export interface JsonAnswer {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

export type Send = (path: string, init: RequestInit) => Response | Promise<Response>;

export async function jsonCall(send: Send, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonAnswer> {
  const res = await send(path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

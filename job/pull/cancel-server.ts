/**
 * The pull Job's cancel call: `POST /cancel` on the Pod's address (FELIS_POD_IP, FELIS_SERVE_PORT)
 * with the Job's token (its SHA-256 in FELIS_SERVE_TOKEN_SHA256), answered 202 and ending the pull
 * as cancelled. The functions hold no `jobs delete`: this is how files-pull stops a pull. Anything
 * else is 404; a wrong token 401. The listener closes when the op ends.
 * @module
 */
import { bearerMatches, listenOn, send } from '../serve/server.ts';
import { listenEnv } from '../serve/env.ts';

export const CANCEL_PATH = '/cancel';

export interface CancelListener {
  signal: AbortSignal;
  port: number;
  close(): Promise<void>;
}

/** Starts the listener when the env names a Pod address and a token digest; undefined when it does not. */
export async function listenForCancel(env: Record<string, string | undefined>): Promise<CancelListener | undefined> {
  if (!env.FELIS_SERVE_TOKEN_SHA256) return undefined;
  const { host, digest, port } = listenEnv(env, 'FELIS_SERVE_TOKEN_SHA256');
  const expected = Buffer.from(digest, 'hex');
  const cancel = new AbortController();
  // Loaded here, not imported: a static import would load node:http at every Job's start (connect.ts).
  const server = process.getBuiltinModule('node:http').createServer({ requestTimeout: 10_000, headersTimeout: 5_000 }, (req, res) => {
    req.resume();
    if (!bearerMatches(req.headers.authorization, expected)) return send(res, 401, '{"error":"unauthorized"}\n');
    const path = (req.url ?? '').split('?')[0];
    if (path !== CANCEL_PATH) return send(res, 404, '{"error":"not found"}\n');
    if (req.method !== 'POST') return send(res, 405, '{"error":"POST only"}\n', { allow: 'POST' });
    cancel.abort();
    send(res, 202, '{"cancelled":true}\n');
  });
  const address = await listenOn(server, port, host);
  return {
    signal: cancel.signal,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

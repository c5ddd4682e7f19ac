/**
 * The pull Job's cancel call: `POST /cancel` on the Pod's address (FELIS_POD_IP, FELIS_SERVE_PORT)
 * with the Job's token (its SHA-256 in FELIS_SERVE_TOKEN_SHA256), answered 202 and ending the pull
 * as cancelled. The functions hold no `jobs delete`: this is how files-pull stops a pull. A wrong
 * token is 401, anything else 404 or 405 (job/http/router.ts). The listener closes when the op ends.
 * @module
 */

import { send } from '../http/answer.ts';
import { PodServer } from '../http/listen.ts';
import { listenEnv } from './env.ts';

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
  const cancel = new AbortController();
  // Loaded when listening (PodServer), not imported: node:http at every Job's start would cost (connect.ts).
  // No idle end: the listener closes when the op ends, and cuts any call then.
  const pod = new PodServer<'ended'>({ tokenSha256: digest, requestTimeoutMs: 10_000, life: { idleMs: 0, graceMs: 0 } });
  pod.route('POST', CANCEL_PATH, (req, res) => {
    req.resume();
    cancel.abort();
    send(res, 202, '{"cancelled":true}\n');
  });
  const address = await pod.listen(port, host);
  return {
    signal: cancel.signal,
    port: address.port,
    close: async () => {
      pod.life.stop('ended');
      await pod.stopped;
    },
  };
}

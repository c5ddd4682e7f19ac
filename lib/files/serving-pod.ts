/**
 * Reaching a Job Pod that serves on its own address (an export's download, a log follow): find it
 * by a label with `pods list` (no `pods get` or watch), wait until it runs with an address, then
 * ask its program with the Job's token, retrying a refused connection while the program is still
 * starting (lib/protocol/pod-listen.ts's schedule). The answer's body is handed on unread: the
 * caller streams it. Each caller names its errors (its own codes) from the two kinds below.
 * @module
 */
import http from 'node:http';
import type { V1Pod } from '@kubernetes/client-node';
import { callableAddress, containerTermination, describeTermination } from '../kube/job-facts.ts';
import { FILES_CONTAINER } from '../labels.ts';
import { connectRetryMs } from '../protocol/pod-listen.ts';
import { sleep } from '../sleep.ts';

export interface PodLister {
  listPods(namespace: string, labelSelector: string): Promise<V1Pod[]>;
}

/** The Pod ended, or its program failed, before it served. */
export class PodEndedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PodEndedError';
  }
}

/** The Pod did not serve by the deadline. */
export class PodTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PodTimeoutError';
  }
}

/** The address of the running Pod `selector` finds, once it has one; `what` names it in errors. */
export async function waitForPodAddress(api: PodLister, namespace: string, selector: string, what: string, deadline: number, signal: AbortSignal): Promise<string> {
  for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
    signal.throwIfAborted();
    const pods = await api.listPods(namespace, selector);
    for (const p of pods) {
      const phase = p.status?.phase;
      if (phase === 'Failed' || phase === 'Succeeded') {
        throw new PodEndedError(`${what} pod ${p.metadata?.name} ended (${phase}) before serving: ${describeTermination(containerTermination(p, FILES_CONTAINER))}`);
      }
      const ip = callableAddress(p, FILES_CONTAINER);
      if (ip) return ip;
    }
    if (Date.now() + delay > deadline) throw new PodTimeoutError(`${what} pod (${selector}) did not start in time`);
    await sleep(delay, signal);
  }
}

export interface PodAsk {
  ip: string;
  port: number;
  /** The path and query on the Pod (`/download`, `/follow?from=…`). */
  path: string;
  token: string;
  /** Headers beside the token, already bounded by the caller. */
  headers?: Record<string, string>;
  /** Names the Pod in errors. */
  what: string;
}

/**
 * `GET` on the Pod with the token. A refused or reset connection is retried until `deadline` (the
 * program may not listen yet); any answer is returned as it is, its body unread. The signal also
 * ends the answer's stream later (the caller went away).
 */
export async function askPod(a: PodAsk, deadline: number, signal: AbortSignal): Promise<http.IncomingMessage> {
  let firstRefusal: number | undefined;
  for (;;) {
    try {
      return await once(a, signal);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (signal.aborted) throw signal.reason;
      if (code !== 'ECONNREFUSED' && code !== 'ECONNRESET') throw new PodEndedError(`${a.what} pod at ${a.ip}: ${(err as Error).message}`);
      firstRefusal ??= Date.now();
      const wait = connectRetryMs(Date.now() - firstRefusal);
      if (Date.now() + wait > deadline) throw new PodTimeoutError(`${a.what} pod at ${a.ip} did not listen in time`);
      await sleep(wait, signal);
    }
  }
}

function once(a: PodAsk, signal: AbortSignal): Promise<http.IncomingMessage> {
  const headers: Record<string, string> = { ...a.headers, authorization: `Bearer ${a.token}` };
  return new Promise((resolve, reject) => {
    // Large socket buffers: a download is streamed through, and bigger reads cost less per byte.
    // (Node passes `highWaterMark` on to the connection; its typings do not list it yet.)
    const options = { host: a.ip, port: a.port, path: a.path, method: 'GET', agent: false, headers, signal, highWaterMark: 1 << 20 };
    const req = http.request(options as http.RequestOptions, resolve);
    req.once('error', reject);
    req.end();
  });
}

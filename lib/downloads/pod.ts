/**
 * Reaching a download's export Pod: find it by its export id with `pods list` (no `pods get` or
 * watch), wait until it runs with an address, then ask it for the download with the Job's token,
 * retrying a refused connection while the program is still starting. The caller's `Range` and
 * `If-Range` (bounded) are the only request headers passed on. The answer's body is handed
 * on unread: the caller streams it.
 * @module
 */
import http from 'node:http';
import type { V1Pod } from '@kubernetes/client-node';
import { LABEL_EXPORT_ID } from '../job-spec/export-job.ts';
import { callableAddress, containerTermination, describeTermination } from '../kube/job-facts.ts';
import { FILES_CONTAINER } from '../labels.ts';
import { connectRetryMs } from '../protocol/pod-listen.ts';
import type { RangeAsk } from '../protocol/range.ts';
import { sleep } from '../sleep.ts';

export interface PodLister {
  listPods(namespace: string, labelSelector: string): Promise<V1Pod[]>;
}

/** The export Pod ended, or never served, before the download could be had (→ 500, detail logged). */
export class ExportPodError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExportPodError';
  }
}

/** The export Pod did not serve in time (→ 504 export_timeout). */
export class ExportTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExportTimeoutError';
  }
}

/** The running export Pod's address, once it has one. */
export async function waitForExportPod(api: PodLister, namespace: string, exportId: string, deadline: number, signal: AbortSignal): Promise<string> {
  for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
    signal.throwIfAborted();
    const pods = await api.listPods(namespace, `${LABEL_EXPORT_ID}=${exportId}`);
    for (const p of pods) {
      const phase = p.status?.phase;
      if (phase === 'Failed' || phase === 'Succeeded') {
        throw new ExportPodError(`export pod ${p.metadata?.name} ended (${phase}) before serving: ${describeTermination(containerTermination(p, FILES_CONTAINER))}`);
      }
      const ip = callableAddress(p, FILES_CONTAINER);
      if (ip) return ip;
    }
    if (Date.now() + delay > deadline) throw new ExportTimeoutError(`export pod for ${exportId} did not start in time`);
    await sleep(delay, signal);
  }
}

/**
 * `GET /download` on the Pod with the token. A refused or reset connection is retried until
 * `deadline` (the program may not listen yet), on lib/protocol/pod-listen.ts's schedule; any
 * answer is returned as it is, its body unread.
 */
export async function requestDownload(ip: string, port: number, token: string, deadline: number, signal: AbortSignal, ask: RangeAsk = {}): Promise<http.IncomingMessage> {
  let firstRefusal: number | undefined;
  for (;;) {
    try {
      return await once(ip, port, token, signal, ask);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (signal.aborted) throw signal.reason;
      if (code !== 'ECONNREFUSED' && code !== 'ECONNRESET') throw new ExportPodError(`export pod at ${ip}: ${(err as Error).message}`);
      firstRefusal ??= Date.now();
      const wait = connectRetryMs(Date.now() - firstRefusal);
      if (Date.now() + wait > deadline) throw new ExportTimeoutError(`export pod at ${ip} did not listen in time`);
      await sleep(wait, signal);
    }
  }
}

function once(ip: string, port: number, token: string, signal: AbortSignal, ask: RangeAsk): Promise<http.IncomingMessage> {
  // Only the range headers go on, and only as bounded by rangeAsk: the Pod decides what they mean.
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (ask.range !== undefined) headers.range = ask.range;
  if (ask.ifRange !== undefined) headers['if-range'] = ask.ifRange;
  return new Promise((resolve, reject) => {
    // Large socket buffers: the download is streamed through, and bigger reads cost less per byte.
    // (Node passes `highWaterMark` on to the connection; its typings do not list it yet.)
    const options = { host: ip, port, path: '/download', method: 'GET', agent: false, headers, signal, highWaterMark: 1 << 20 };
    const req = http.request(options as http.RequestOptions, resolve);
    req.once('error', reject);
    req.end();
  });
}

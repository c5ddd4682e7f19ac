/**
 * Cancelling a running pull without `jobs delete`: find the pull Job's Pod by its op-id label with
 * `pods list`, and POST `/cancel` to its address with the Job's token (HMAC of the Job's name
 * under the shared job key; the spec holds only the token's SHA-256). The Pod ends the pull as
 * `pull_cancelled` and removes its working file; the op's outcome is its result line, read by the
 * ops listing as for every background op. Verbs: `pods list`.
 * @module
 */
import http from 'node:http';
import type { V1Pod } from '@kubernetes/client-node';
import { DomainError } from '../errors.ts';
import { describeKubeError } from '../kube/errors.ts';
import { callableAddress } from '../kube/job-facts.ts';
import { FILES_CONTAINER, LABEL_FILES_OP, LABEL_FILES_PULL, LABEL_SERVER } from '../labels.ts';
import { RunnerError } from '../runner/errors.ts';
import { sleep } from '../sleep.ts';
import type { PodLister } from './write-delivery.ts';

/** The path a pull Job's Pod serves its cancel call on (job/serve/cancel-server.ts). */
export const CANCEL_PATH = '/cancel';
/** How long a pull whose Pod is still starting is waited for before the cancel gives up. */
const START_WAIT_MS = 10_000;

export class PullCancelUnavailableError extends DomainError {
  constructor() {
    super('pull_cancel_unavailable', 'unavailable', 'a pull can be cancelled only with a job key (FELIS_JOB_KEY_FILE)');
    this.name = 'PullCancelUnavailableError';
  }
}

export class PullNotRunningError extends DomainError {
  constructor(opId: string) {
    super('pull_not_running', 'conflict', `the pull ${opId} has already ended; see it in the ops listing`);
    this.name = 'PullNotRunningError';
  }
}

export interface CancelOptions {
  api: PodLister;
  namespace: string;
  server: string;
  opId: string;
  token: string;
  port: number;
  signal?: AbortSignal;
  connectTimeoutMs?: number;
}

const ended = (p: V1Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

export async function cancelPull(o: CancelOptions): Promise<void> {
  if (!/^[0-9a-f]{16}$/.test(o.opId)) throw new DomainError('not_found', 'not_found', `no pull ${JSON.stringify(o.opId)} on server ${o.server}`);
  // A pull Job is labelled mode read (it holds no world); its own label marks it.
  const selector = `${LABEL_FILES_OP}=${o.opId},${LABEL_SERVER}=${o.server},${LABEL_FILES_PULL}=true`;
  const until = performance.now() + START_WAIT_MS;
  for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
    let pods: V1Pod[];
    try {
      pods = await o.api.listPods(o.namespace, selector);
    } catch (err) {
      throw new RunnerError(`list pods of pull ${o.opId}: ${describeKubeError(err)}`, { cause: err });
    }
    if (pods.length === 0) throw new DomainError('not_found', 'not_found', `no pull ${o.opId} on server ${o.server}`);
    if (pods.every(ended)) throw new PullNotRunningError(o.opId);
    const ip = pods.map((p) => callableAddress(p, FILES_CONTAINER)).find((a) => a !== undefined);
    if (ip) {
      const status = await post(o, ip);
      if (status === 202) return;
      // Nothing listens: the program has just ended (or not yet begun); list again to tell which.
      if (status !== 'unreachable') throw new RunnerError(`the pull job of op ${o.opId} refused its cancel call: ${status}`);
    }
    if (performance.now() > until) throw new DomainError('internal', 'internal', `the pull ${o.opId} could not be reached to cancel it`);
    await sleep(delay, o.signal);
  }
}

function post(o: CancelOptions, ip: string): Promise<number | 'unreachable'> {
  return new Promise((resolve) => {
    const req = http.request({ host: ip, port: o.port, path: CANCEL_PATH, method: 'POST', agent: false, headers: { authorization: `Bearer ${o.token}`, 'content-length': '0' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve('unreachable'));
    });
    const t = setTimeout(() => req.destroy(new Error('connect timeout')), o.connectTimeoutMs ?? 2_000);
    req.on('socket', (s) => s.once('connect', () => clearTimeout(t)));
    req.on('close', () => clearTimeout(t));
    req.on('error', () => resolve('unreachable'));
    req.end();
  });
}

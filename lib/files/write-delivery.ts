/**
 * A streamed write's content on its way to the write Job: find the Job's Pod by its op-id label
 * with `pods list`, and once it can take a call, PUT the bytes to it with the Job's token (HMAC of
 * the Job's name under the shared job key; the spec holds only the token's SHA-256). The content is
 * in memory (at most 1 MiB), so a connection that fails is simply tried again. The Job's answer
 * to the PUT only says the bytes are in: the outcome of the write is its result line, which the
 * runner reads from `pods/log` as for every file Job. Verbs: `pods list`.
 * @module
 */
import http from 'node:http';
import type { V1Pod } from '@kubernetes/client-node';
import { describeKubeError } from '../kube/errors.ts';
import { callableAddress } from '../kube/job-facts.ts';
import { FILES_CONTAINER, LABEL_FILES_OP } from '../labels.ts';
import { WRITE_CONTENT_PATH } from '../protocol/content-env.ts';
import { RunnerError } from '../runner/errors.ts';
import { sleep } from '../sleep.ts';

export interface PodLister {
  listPods(namespace: string, labelSelector: string): Promise<V1Pod[]>;
}

export interface DeliveryOptions {
  api: PodLister;
  namespace: string;
  /** The Job's name (for messages) and op id (its Pod's label). */
  job: string;
  opId: string;
  token: string;
  /** The Pod's serving port (tests: the one their receiver picked, once it listens). */
  port: number | (() => number);
  content: Buffer;
  /** Ends the delivery (the run is over, or the caller's deadline passed). */
  signal: AbortSignal;
  /**
   * Set once every byte has left for the Pod on some attempt: from then on the Job may have the
   * content (and write it) even when no answer came. Until then it cannot have written anything.
   */
  state: { sent: boolean };
  connectTimeoutMs?: number;
}

/** How soon a refused connection to a running Pod is tried again, and for how long before the Pod is listed again. */
const RETRY_MS = 15;
const RETRY_WINDOW_MS = 1_000;

type Attempt = { kind: 'received' } | { kind: 'again' } | { kind: 'refused'; status: number; text: string };

/** An abort ends the wait without throwing: the loops below see the signal and stop. */
const pause = (ms: number, signal: AbortSignal) => sleep(ms, signal).catch(() => {});

/**
 * Delivers the content; resolves once the Pod has taken it, or when `signal` ends the attempt
 * (the caller then decides from the run). Throws RunnerError when the Pod refuses it for good (a
 * token it does not accept, a wiring mistake): nothing was written then.
 */
export async function deliverContent(o: DeliveryOptions): Promise<void> {
  const selector = `${LABEL_FILES_OP}=${o.opId}`;
  // At most the runner's own pace while a container is created: the write waits on this poll.
  for (let delay = 20; !o.signal.aborted; delay = Math.min(delay * 2, 120)) {
    let pods: V1Pod[];
    try {
      pods = await o.api.listPods(o.namespace, selector);
    } catch (err) {
      if (o.signal.aborted) return;
      throw new RunnerError(`list pods of write job ${o.job}: ${describeKubeError(err)}`, { cause: err });
    }
    // A Pod that has ended took what it could: the runner reads how it went from its log.
    if (pods.some((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed')) return;
    const ip = pods.map((p) => callableAddress(p, FILES_CONTAINER)).find((a) => a !== undefined);
    if (ip) {
      // The container runs: its program listens within moments. Retried at once, without asking
      // the API again, for a while; then the Pod is listed again (it may have ended).
      for (const end = performance.now() + RETRY_WINDOW_MS; !o.signal.aborted && performance.now() < end; ) {
        const a = await attempt(o, ip);
        if (a.kind === 'received') return;
        // Another body in flight is one of ours (a retry beside a dying connection): wait for it.
        if (a.kind === 'refused' && a.status !== 409) throw new RunnerError(`the write job ${o.job} refused its content: ${a.status} ${a.text.slice(0, 200)}`);
        await pause(RETRY_MS, o.signal);
      }
      continue;
    }
    await pause(delay, o.signal);
  }
}

/** One PUT of the whole content. Connection failures are `again`: the caller retries. */
function attempt(o: DeliveryOptions, ip: string): Promise<Attempt> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (a: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      o.signal.removeEventListener('abort', onAbort);
      resolve(a);
    };
    const req = http.request(
      {
        host: ip,
        port: typeof o.port === 'function' ? o.port() : o.port,
        path: WRITE_CONTENT_PATH,
        method: 'PUT',
        agent: false,
        headers: { authorization: `Bearer ${o.token}`, 'content-length': String(o.content.length), 'content-type': 'application/octet-stream' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let n = 0;
        res.on('data', (c: Buffer) => {
          n += c.length;
          if (n <= 4096) chunks.push(c);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          done(res.statusCode === 200 ? { kind: 'received' } : { kind: 'refused', status: res.statusCode ?? 0, text });
        });
        res.on('error', () => done({ kind: 'again' }));
      },
    );
    const onAbort = () => {
      req.destroy();
      done({ kind: 'again' });
    };
    o.signal.addEventListener('abort', onAbort, { once: true });
    // An address nobody answers (a Pod still starting its program) must not hold up the retry.
    const connectTimer = setTimeout(() => {
      if (req.socket?.connecting !== false) req.destroy(new Error('connect timeout'));
    }, o.connectTimeoutMs ?? 1_000);
    req.on('error', () => done({ kind: 'again' }));
    req.on('finish', () => (o.state.sent = true));
    req.end(o.content);
  });
}

/**
 * Knative Eventing's ApiServerSource and PingSource, as far as felis-world relies on them, so that
 * settling can be tested end to end (a Job changes → an event → a settle pass → a restore Job) and
 * `npm start` settles restore chains by itself, as a Knative deployment does.
 *
 * They behave like the real adapters where it matters to a receiver:
 * - ApiServerSource (Resource mode): `dev.knative.apiserver.resource.add|update|delete`, `source`
 *   the API server's URL, `subject` `/apis/<apiVersion>/namespaces/<ns>/<plural>/<name>`, the
 *   extensions `kind`, `name`, `namespace`, and the whole object as data. Objects that exist when
 *   the source starts produce no `add` (the real adapter ignores its initial list), every `id` is a
 *   new UUID, and a delivery is retried 5 times with exponential back-off from 50 ms, then dropped.
 * - PingSource: `dev.knative.sources.ping` from `/apis/v1/namespaces/<ns>/pingsources/<name>`, no
 *   data, every period (the real one follows a cron schedule; tests need seconds, not minutes).
 *
 * The ApiServerSource follows the Jobs by listing them (the embedded API server has no watch), so
 * it works against the real API server of the cluster tier too. Its identity only lists Jobs.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { BatchV1Api, type KubeConfig, type V1Job } from '@kubernetes/client-node';
import { CloudEvent, HTTP } from 'cloudevents';

export interface SourceLogger {
  warn(obj: object, msg: string): void;
}

export interface EventSource {
  /** Stops the source after the event in flight, if any. */
  stop(): Promise<void>;
}

const RETRIES = 5;
const FIRST_BACKOFF_MS = 50;
/** The statuses a Knative sender retries (the data-plane contract); anything else is final. */
const retryable = (status: number) => status === 404 || status === 409 || status === 429 || status >= 500;

/** POSTs one event in binary mode; true once the sink accepted it, false once it gave up. */
export async function deliver(sink: string, event: CloudEvent<unknown>, logger?: SourceLogger, stopped: () => boolean = () => false, token?: string): Promise<boolean> {
  const msg = HTTP.binary(event);
  // As Knative's OIDC delivery does: the sender's token for the sink's audience.
  const headers = { ...(msg.headers as Record<string, string>), ...(token ? { authorization: `Bearer ${token}` } : {}) };
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, FIRST_BACKOFF_MS * 2 ** (attempt - 1)));
    if (stopped()) return false;
    try {
      const res = await fetch(sink, { method: 'POST', headers, body: msg.body as string | undefined });
      await res.arrayBuffer();
      if (res.ok) return true;
      if (!retryable(res.status)) {
        logger?.warn({ id: event.id, type: event.type, status: res.status }, 'event source: the sink refused the event');
        return false;
      }
    } catch {
      // the sink is not there (yet): retried like a retryable status
    }
  }
  logger?.warn({ id: event.id, type: event.type }, 'event source: event dropped after retries');
  return false;
}

export interface ApiServerSourceOptions {
  /** A KubeConfig whose user may list Jobs in `namespace`. */
  kubeConfig: KubeConfig;
  namespace: string;
  /** A label selector, as in the source's `resources[].selector`. */
  labelSelector?: string;
  /** Where events go (a function's event entry, `<url>/`). */
  sink: string;
  /** How often the Jobs are listed. Default 250 ms. */
  pollMs?: number;
  logger?: SourceLogger;
  /** Sent as the bearer token of each delivery (Knative's OIDC delivery); none by default. */
  token?: string;
}

type Change = 'add' | 'update' | 'delete';

/** What changed between two lists of Jobs, in the order a watch would report it. */
export function jobChanges(before: Map<string, V1Job>, after: Map<string, V1Job>): Array<{ change: Change; job: V1Job }> {
  const out: Array<{ change: Change; job: V1Job }> = [];
  for (const [uid, job] of after) {
    const old = before.get(uid);
    if (!old) out.push({ change: 'add', job });
    else if (old.metadata?.resourceVersion !== job.metadata?.resourceVersion) out.push({ change: 'update', job });
  }
  for (const [uid, job] of before) if (!after.has(uid)) out.push({ change: 'delete', job });
  const rv = (j: V1Job) => Number(j.metadata?.resourceVersion ?? 0);
  return out.sort((a, b) => rv(a.job) - rv(b.job));
}

/** The event the real adapter sends for one Job change (Resource mode). */
export function jobChangeEvent(server: string, change: Change, job: V1Job): CloudEvent<unknown> {
  const name = job.metadata?.name ?? '';
  const namespace = job.metadata?.namespace ?? '';
  const data = JSON.parse(JSON.stringify({ ...job, apiVersion: 'batch/v1', kind: 'Job' })) as unknown;
  return new CloudEvent<unknown>({
    id: randomUUID(),
    type: `dev.knative.apiserver.resource.${change}`,
    source: server,
    subject: `/apis/batch/v1/namespaces/${namespace}/jobs/${name}`,
    datacontenttype: 'application/json',
    kind: 'Job',
    name,
    namespace,
    data,
  });
}

export function startApiServerSource(opts: ApiServerSourceOptions): EventSource {
  const batch = opts.kubeConfig.makeApiClient(BatchV1Api);
  const server = opts.kubeConfig.getCurrentCluster()?.server ?? '';
  const pollMs = opts.pollMs ?? 250;
  let known: Map<string, V1Job> | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();

  const list = async () => {
    const items = (await batch.listNamespacedJob({ namespace: opts.namespace, labelSelector: opts.labelSelector })).items;
    return new Map(items.map((j) => [j.metadata!.uid!, j]));
  };
  const tick = async () => {
    try {
      const now = await list();
      // The first list is the starting point: the real adapter sends nothing for what already exists.
      if (known) {
        for (const { change, job } of jobChanges(known, now)) {
          if (stopped) return;
          await deliver(opts.sink, jobChangeEvent(server, change, job), opts.logger, () => stopped, opts.token);
        }
      }
      known = now;
    } catch (err) {
      opts.logger?.warn({ err: String(err) }, 'event source: listing Jobs failed; retrying');
    }
  };
  const loop = () => {
    round = tick().finally(() => {
      if (!stopped) timer = setTimeout(loop, pollMs);
    });
  };
  loop();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}

export interface PingSourceOptions {
  sink: string;
  /** The source's namespace and name: they make its `source` attribute. */
  namespace: string;
  name: string;
  periodMs: number;
  logger?: SourceLogger;
  /** Sent as the bearer token of each delivery (Knative's OIDC delivery); none by default. */
  token?: string;
}

export function pingEvent(namespace: string, name: string): CloudEvent<unknown> {
  return new CloudEvent<unknown>({ id: randomUUID(), type: 'dev.knative.sources.ping', source: `/apis/v1/namespaces/${namespace}/pingsources/${name}` });
}

export function startPingSource(opts: PingSourceOptions): EventSource {
  let stopped = false;
  let inFlight: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    // A tick that is still being delivered is not overtaken: the next one waits its turn.
    inFlight = inFlight.then(() => (stopped ? false : deliver(opts.sink, pingEvent(opts.namespace, opts.name), opts.logger, () => stopped, opts.token)));
  }, opts.periodMs);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await inFlight;
    },
  };
}

/**
 * The Kubernetes calls a file operation makes — create the Job, list its Pod by label, read the
 * Pod's log, and (for a mutation) list its Job until finished — behind one small interface, so the runner's logic can be read (and benchmarked
 * against other polling strategies) apart from client-node's plumbing.
 * @module
 */
import type { BatchV1Api, CoreV1Api, KubeConfig, V1Job, V1Pod } from '@kubernetes/client-node';
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
import { type ClientNode, lazyClients } from './client.ts';

/** What opening a Pod's log can tell us. */
export type LogOpening =
  | { kind: 'stream'; body: AsyncIterable<Buffer>; close(): void }
  /** 204: the Pod is not bound to a node yet. */
  | { kind: 'unscheduled' }
  /** 400 "is waiting to start": scheduled, the container is being created. */
  | { kind: 'waiting' }
  /** 404: the Pod is gone (deadline, TTL, deleted). */
  | { kind: 'gone' };

export interface LogOptions {
  follow: boolean;
  limitBytes?: number;
  tailLines?: number;
}

export interface JobPodApi {
  /** Resolves to the Job as created (its creationTimestamp), where the implementation has it. */
  createJob(namespace: string, job: V1Job): Promise<V1Job | void>;
  listPods(namespace: string, labelSelector: string): Promise<V1Pod[]>;
  listJobs(namespace: string, labelSelector: string): Promise<V1Job[]>;
  openLog(namespace: string, pod: string, container: string, opts: LogOptions): Promise<LogOpening>;
  /** Merge-patches annotations onto a Job (`jobs patch`). Optional: fakes without it record nothing. */
  annotateJob?(namespace: string, name: string, annotations: Record<string, string>): Promise<void>;
}

/** The production JobPodApi over client-node, loaded on the first call (see ./client.ts). */
export class KubeJobPodApi implements JobPodApi {
  readonly #clients: () => Promise<{ k: ClientNode; kc: KubeConfig; batch: BatchV1Api; core: CoreV1Api; mergePatch: ReturnType<ClientNode['setHeaderOptions']> }>;

  constructor(kc: KubeConfig | Promise<KubeConfig>) {
    this.#clients = lazyClients(kc, (k, config) => ({
      batch: config.makeApiClient(k.BatchV1Api),
      core: config.makeApiClient(k.CoreV1Api),
      mergePatch: k.setHeaderOptions('Content-Type', k.PatchStrategy.MergePatch),
    }));
  }

  async annotateJob(namespace: string, name: string, annotations: Record<string, string>): Promise<void> {
    const c = await this.#clients();
    await c.batch.patchNamespacedJob({ namespace, name, body: { metadata: { annotations } } }, c.mergePatch);
  }

  async createJob(namespace: string, body: V1Job): Promise<V1Job> {
    return (await this.#clients()).batch.createNamespacedJob({ namespace, body });
  }

  async listPods(namespace: string, labelSelector: string): Promise<V1Pod[]> {
    const list = await (await this.#clients()).core.listNamespacedPod({ namespace, labelSelector });
    return list.items;
  }

  async listJobs(namespace: string, labelSelector: string): Promise<V1Job[]> {
    return (await (await this.#clients()).batch.listNamespacedJob({ namespace, labelSelector })).items;
  }

  /**
   * Opens `pods/log` with client-node's authentication and TLS, but reads the reply ourselves:
   * client-node's `Log` helper drops the body of a 400 (so "waiting to start" cannot be told from
   * a real error) and does not pass a stream error on to the sink, which would leave a reader
   * waiting forever on a broken connection.
   */
  async openLog(namespace: string, pod: string, container: string, opts: LogOptions): Promise<LogOpening> {
    const { k, kc } = await this.#clients();
    const server = kc.getCurrentCluster()?.server;
    if (!server) throw new Error('no current cluster in the kubeconfig');
    const url = new URL(`${server.replace(/\/$/, '')}/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/log`);
    url.searchParams.set('container', container);
    if (opts.follow) url.searchParams.set('follow', 'true');
    if (opts.limitBytes) url.searchParams.set('limitBytes', String(opts.limitBytes));
    if (opts.tailLines !== undefined) url.searchParams.set('tailLines', String(opts.tailLines));
    const ctx = new k.RequestContext(url.toString(), k.HttpMethod.GET);
    await kc.applySecurityAuthentication(ctx);
    // undici.request, not fetch: a Node stream with no web-stream layer between the socket and the
    // scanner, so a result line is seen one event-loop turn after it arrives.
    const res = await k.request(url, { method: 'GET', headers: ctx.getHeaders(), dispatcher: ctx.getDispatcher() });
    if (res.statusCode === 200) {
      return { kind: 'stream', body: res.body, close: () => res.body.destroy() };
    }
    const text = await res.body.text().catch(() => '');
    if (res.statusCode === 204) return { kind: 'unscheduled' };
    if (res.statusCode === 404) return { kind: 'gone' };
    if (res.statusCode === 400 && /is waiting to start/.test(text)) return { kind: 'waiting' };
    throw new ApiException(res.statusCode, `read pod log: HTTP ${res.statusCode}`, text, {});
  }
}

/**
 * The Kubernetes calls of world maintenance: read and merge-patch a MinecraftServer (the lock and
 * the desired state ride on it, under optimistic concurrency), list a server's Jobs and game Pods,
 * read its world claim (does it exist, its access modes), and patch a Job's labels (restore-chain settling).
 * @module
 */

import type { BatchV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, V1Job, V1Pod } from '@kubernetes/client-node';
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
import { type ClientNode, lazyClients } from './client.ts';
import { kubeStatus } from './errors.ts';

export const MC_GROUP = 'felis.lolicon.best';
export const MC_VERSION = 'v1alpha1';
export const MC_PLURAL = 'minecraftservers';

/** The fields of a MinecraftServer this project reads. */
export interface MinecraftServer {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec?: { desiredState?: string; nodeName?: string; storage?: { claimName?: string; size?: string } };
  status?: { phase?: string; ready?: boolean; nodeName?: string };
}

/** The fields of a world's PersistentVolumeClaim this project reads. */
export interface WorldClaim {
  /** `spec.accessModes` (empty when the claim names none). */
  accessModes: string[];
}

export interface ServerApi {
  getServer(namespace: string, name: string): Promise<MinecraftServer | undefined>;
  listServers(namespace: string): Promise<MinecraftServer[]>;
  /** JSON merge patch; include metadata.resourceVersion in `patch` for an optimistic write (409 on a stale one). */
  patchServer(namespace: string, name: string, patch: object): Promise<MinecraftServer>;
  /**
   * Removes the annotation `key` if, and only if, it still holds `value`, in one request (a JSON
   * patch whose `test` the API server checks in the same write): true when removed, false when
   * it held something else or nothing, or the server is gone.
   */
  removeAnnotationIf(namespace: string, name: string, key: string, value: string): Promise<boolean>;
  listJobs(namespace: string, labelSelector: string): Promise<V1Job[]>;
  listPods(namespace: string, labelSelector: string): Promise<V1Pod[]>;
  /** The world claim's access modes, or undefined when there is no such claim. */
  getClaim(namespace: string, claim: string): Promise<WorldClaim | undefined>;
  patchJob(namespace: string, name: string, patch: object): Promise<void>;
  createJob(namespace: string, job: V1Job): Promise<V1Job>;
}

interface Clients {
  k: ClientNode;
  kc: KubeConfig;
  custom: CustomObjectsApi;
  core: CoreV1Api;
  batch: BatchV1Api;
  /** client-node picks json-patch for an object body unless told otherwise. */
  mergePatch: ReturnType<ClientNode['setHeaderOptions']>;
}

/** The API clients are made on first call, so constructing this loads nothing (see ./client.ts). */
export class KubeServerApi implements ServerApi {
  readonly #clients: () => Promise<Clients>;

  constructor(kc: KubeConfig | Promise<KubeConfig>) {
    this.#clients = lazyClients(kc, (k, config) => ({
      custom: config.makeApiClient(k.CustomObjectsApi),
      core: config.makeApiClient(k.CoreV1Api),
      batch: config.makeApiClient(k.BatchV1Api),
      mergePatch: k.setHeaderOptions('Content-Type', k.PatchStrategy.MergePatch),
    }));
  }

  /**
   * One object by its API path, or undefined when it does not exist. The two reads every file
   * request makes (the server, its claim) come here: client-node's authentication, TLS and kept-alive
   * pool, but read with undici's `request` instead of its generated fetch client, which costs about
   * twice as much per call in time and garbage. Other statuses throw client-node's ApiException
   * (the Status text as body), so errors read as everywhere else.
   */
  async #getObject(path: string): Promise<unknown> {
    const { k, kc } = await this.#clients();
    const server = kc.getCurrentCluster()?.server;
    if (!server) throw new Error('no current cluster in the kubeconfig');
    const url = `${server.replace(/\/$/, '')}${path}`;
    const ctx = new k.RequestContext(url, k.HttpMethod.GET);
    ctx.setHeaderParam('Accept', 'application/json');
    await kc.applySecurityAuthentication(ctx);
    const res = await k.request(url, { method: 'GET', headers: ctx.getHeaders(), dispatcher: ctx.getDispatcher() });
    const text = await res.body.text();
    if (res.statusCode === 404) return undefined;
    if (res.statusCode !== 200) throw new ApiException(res.statusCode, `HTTP-Code: ${res.statusCode}`, text, {});
    return JSON.parse(text) as unknown;
  }

  async getServer(namespace: string, name: string): Promise<MinecraftServer | undefined> {
    const path = `/apis/${MC_GROUP}/${MC_VERSION}/namespaces/${encodeURIComponent(namespace)}/${MC_PLURAL}/${encodeURIComponent(name)}`;
    return (await this.#getObject(path)) as MinecraftServer | undefined;
  }

  async listServers(namespace: string): Promise<MinecraftServer[]> {
    const list = (await (await this.#clients()).custom.listNamespacedCustomObject({ group: MC_GROUP, version: MC_VERSION, namespace, plural: MC_PLURAL })) as {
      items: MinecraftServer[];
    };
    return list.items;
  }

  async patchServer(namespace: string, name: string, body: object): Promise<MinecraftServer> {
    const c = await this.#clients();
    return (await c.custom.patchNamespacedCustomObject({ group: MC_GROUP, version: MC_VERSION, namespace, plural: MC_PLURAL, name, body }, c.mergePatch)) as MinecraftServer;
  }

  async removeAnnotationIf(namespace: string, name: string, key: string, value: string): Promise<boolean> {
    const c = await this.#clients();
    const at = `/metadata/annotations/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    try {
      // An array body goes as application/json-patch+json.
      await c.custom.patchNamespacedCustomObject({
        group: MC_GROUP,
        version: MC_VERSION,
        namespace,
        plural: MC_PLURAL,
        name,
        body: [
          { op: 'test', path: at, value },
          { op: 'remove', path: at },
        ],
      });
      return true;
    } catch (err) {
      // 422: the test failed (another value, or none); 404: no such server.
      const code = kubeStatus(err)?.code;
      if (code === 422 || code === 404) return false;
      throw err;
    }
  }

  async listJobs(namespace: string, labelSelector: string): Promise<V1Job[]> {
    return (await (await this.#clients()).batch.listNamespacedJob({ namespace, labelSelector })).items;
  }

  async listPods(namespace: string, labelSelector: string): Promise<V1Pod[]> {
    return (await (await this.#clients()).core.listNamespacedPod({ namespace, labelSelector })).items;
  }

  async getClaim(namespace: string, claim: string): Promise<WorldClaim | undefined> {
    const pvc = (await this.#getObject(`/api/v1/namespaces/${encodeURIComponent(namespace)}/persistentvolumeclaims/${encodeURIComponent(claim)}`)) as { spec?: { accessModes?: unknown } } | undefined;
    if (!pvc) return undefined;
    const modes = pvc.spec?.accessModes;
    return { accessModes: Array.isArray(modes) ? modes.filter((m): m is string => typeof m === 'string') : [] };
  }

  async patchJob(namespace: string, name: string, body: object): Promise<void> {
    const c = await this.#clients();
    await c.batch.patchNamespacedJob({ namespace, name, body }, c.mergePatch);
  }

  async createJob(namespace: string, body: V1Job): Promise<V1Job> {
    return (await this.#clients()).batch.createNamespacedJob({ namespace, body });
  }
}

/**
 * Helpers for the cluster's own tests: a cluster on a temporary data directory, typed clients,
 * Status extraction from client-node's `ApiException` (whose body is the raw JSON text), polling.
 *
 * @module
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiException, BatchV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type V1Job } from '@kubernetes/client-node';
import { type EmbeddedCluster, type StartClusterOptions, startCluster } from './index.ts';

/** A fixed manifest for these tests (create jobs, list pods, get pods/log). */
export const RBAC_MANIFEST = join(import.meta.dirname, 'testdata', 'rbac.yaml');
/** The product's manifest. */
export const PRODUCT_RBAC_MANIFEST = join(import.meta.dirname, '..', 'knative', 'rbac.yaml');
export const FELIS_USER = 'system:serviceaccount:minecraft:felis-world';

export interface TestCluster {
  cluster: EmbeddedCluster;
  dataDir: string;
  admin: KubeConfig;
  batch: BatchV1Api;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  close(): Promise<void>;
}

export async function testCluster(opts: Partial<StartClusterOptions> = {}): Promise<TestCluster> {
  const dataDir = mkdtempSync(join(tmpdir(), 'felis-cluster-test-'));
  const cluster = await startCluster({ dataDir, rbacManifest: RBAC_MANIFEST, backoffScale: 0.001, ...opts });
  const admin = cluster.kubeConfig(cluster.adminToken);
  return {
    cluster,
    dataDir,
    admin,
    batch: admin.makeApiClient(BatchV1Api),
    core: admin.makeApiClient(CoreV1Api),
    custom: admin.makeApiClient(CustomObjectsApi),
    async close() {
      await cluster.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The parsed `Status` of a failed client-node call (401 has no body). */
export async function statusOf(p: Promise<unknown>): Promise<{ code: number; body: any; headers: Record<string, string> }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiException) {
      const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
      return { code: err.code, body, headers: err.headers };
    }
    throw err;
  }
  throw new Error('expected the call to fail');
}

export async function waitFor<T>(fn: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 5000, intervalMs = 10): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** A Job running a host command in container `files`. */
export function shJob(name: string, script: string, extra: { labels?: Record<string, string>; spec?: Partial<V1Job['spec']> } = {}): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, labels: extra.labels },
    spec: {
      backoffLimit: 0,
      ...(extra.spec ?? {}),
      template: {
        metadata: { labels: extra.labels },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'files', image: 'busybox:1.36', command: ['sh', '-c', script] }],
        },
      },
    },
  } as V1Job;
}

/** A fetch Response whose `json()` is untyped, for assertions on raw replies. */
export type RawResponse = Omit<Response, 'json'> & { json(): Promise<any> };

/** A plain fetch against the cluster (admin token unless `token` is given; '' sends none). */
export async function rawFetch(cluster: EmbeddedCluster, path: string, init: { method?: string; token?: string; body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  const token = init.token === undefined ? cluster.adminToken : init.token;
  if (token) headers.authorization = `Bearer ${token}`;
  return cluster.fetch(path, { method: init.method ?? 'GET', headers, body: init.body as RequestInit['body'] });
}

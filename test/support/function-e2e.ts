/**
 * What the functions' end-to-end scenarios share: each function's folder declares its own in
 * functions/<fn>/e2e.test-kit.ts, `rbac` (its calls as its own ServiceAccount, for
 * test/rbac-per-function.e2e.test.ts) and `container` (its calls to its bundle in the image, for
 * test/container/functions.container-test.ts); scripts/collect.ts gathers them into
 * ./function-e2e.generated.test-kit.ts. Here: the shapes of those calls, the setups several
 * scenarios use, and the order the container calls run in.
 * @module
 */

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { ClusterHarness } from '../../cluster/harness.ts';
import { Journal } from '../../job/journal/journal.ts';
import { jobFinished } from '../../lib/kube/job-facts.ts';
import { WORK_PREFIX } from '../../lib/protocol/working-names.ts';
import { waitOp } from './ops.ts';
import { createJob } from './servers.ts';
import type { Stack } from './stack.ts';

export { q } from './stack.ts';
export const sha = (b: string) => createHash('sha256').update(b).digest('hex');
export const LOCK = 'felis.lolicon.best/maintenance';

// The RBAC scenarios (test/rbac-per-function.e2e.test.ts).

/** A body is JSON, or raw bytes with their own headers (an upload); a path may use the previous answer. */
export type RbacCall = [method: string, path: string | ((previous: any) => string), body?: unknown];
export type RawBody = { raw: Buffer; headers: Record<string, string> };
export const isRaw = (b: unknown): b is RawBody => typeof b === 'object' && b !== null && 'raw' in b;
export const upload = (text: string): RawBody => ({
  raw: Buffer.from(text),
  headers: { 'content-length': String(Buffer.byteLength(text)), 'content-digest': `sha-256=:${createHash('sha256').update(text).digest('base64')}:` },
});
/** `tag` makes the names of what a setup creates unique to one run. */
export type Setup = (c: ClusterHarness, tag: string) => Promise<void>;
/** One function's scenario: what it sets up (as the cluster's admin), then its calls as its own ServiceAccount. */
export interface RbacScenario {
  setup?: Setup;
  calls: RbacCall[];
}

/** The data folder of the suite's cluster (its worlds are under it); the suite sets it before the scenarios run. */
export let suiteDir = '';
export const setSuiteDir = (dir: string) => {
  suiteDir = dir;
};

/**
 * Leaves in survival's world the journal of an extraction killed while staging, naming a Job of
 * its own op id: the scenario's mutation Job recovers it first and says so, and its function
 * records on that Job what became of the op (`jobs patch`).
 */
export const interruptedExtraction: Setup = async (c, tag) => {
  const id = randomBytes(8).toString('hex');
  const labels = { 'felis.lolicon.best/files-op': id };
  await createJob(c, {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: `interrupted${tag}-${id}`, namespace: 'minecraft', labels },
    spec: { backoffLimit: 0, template: { metadata: { labels }, spec: { restartPolicy: 'Never', containers: [{ name: 'files', image: 'felis-test/none', command: ['sh', '-c', 'exit 0'] }] } } },
  });
  const root = openSync(join(suiteDir, 'worlds', 'survival'), 'r');
  try {
    const hooks = { rename: renameSync, fsync: fsyncSync, syncfs: () => {} };
    Journal.begin(root, root, 'unzip', WORK_PREFIX + randomBytes(6).toString('hex'), randomBytes(6).toString('hex'), hooks, id);
  } finally {
    closeSync(root);
  }
};

/**
 * A pull Job of survival's that ended staged (its Pod printed the result line a pull prints when its
 * download waits to be placed), for settle's pass to place.
 */
export async function stagedPull(c: ClusterHarness): Promise<void> {
  const id = randomBytes(8).toString('hex');
  const labels = {
    'app.kubernetes.io/managed-by': 'felis-files',
    'felis.lolicon.best/server': 'survival',
    'felis.lolicon.best/files-op': id,
    'felis.lolicon.best/files-mode': 'read',
    'felis.lolicon.best/files-pull': 'true',
    'felis.lolicon.best/files-async': 'true',
  };
  const line = `FELIS-FILES-RESULT: {"bytes":3,"to":"plugins/rbac-${id}.jar","staged":true}`;
  await createJob(c, {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: `files-survival-${id}`, namespace: 'minecraft', labels, annotations: { 'felis.lolicon.best/files-path': 'plugins' } },
    spec: { backoffLimit: 0, template: { metadata: { labels }, spec: { restartPolicy: 'Never', containers: [{ name: 'files', image: 'felis-test/none', command: ['sh', '-c', `echo '${line}'`] }] } } },
  });
  const core = c.kubeConfig(c.adminToken).makeApiClient(CoreV1Api);
  const deadline = Date.now() + 30_000;
  while (!(await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: `felis.lolicon.best/files-op=${id}` })).items.some((p) => p.status?.phase === 'Succeeded')) {
    if (Date.now() > deadline) throw new Error('the staged pull did not end within 30 s');
    await new Promise((res) => setTimeout(res, 50));
  }
  await c.setJobConditions('minecraft', `files-survival-${id}`, [
    { type: 'SuccessCriteriaMet', status: 'True' },
    { type: 'Complete', status: 'True' },
  ]);
}

/** Waits until every background file Job has ended and its Pod has terminated. */
export async function backgroundOpsEnded(c: ClusterHarness): Promise<void> {
  const kc = c.kubeConfig(c.adminToken);
  const batch = kc.makeApiClient(BatchV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const sel = 'felis.lolicon.best/files-async=true';
  const deadline = Date.now() + 30_000;
  for (;;) {
    const jobs = (await batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: sel })).items;
    const pods = (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: sel })).items;
    if (jobs.every(jobFinished) && pods.every((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed')) return;
    if (Date.now() > deadline) throw new Error('the background file Jobs did not end within 30 s');
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Waits until every export Job (a download) has ended: each holds the world while it runs. */
export async function exportsEnded(c: ClusterHarness): Promise<void> {
  const batch = c.kubeConfig(c.adminToken).makeApiClient(BatchV1Api);
  const deadline = Date.now() + 30_000;
  while (!(await batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'app.kubernetes.io/managed-by=felis-export' })).items.every(jobFinished)) {
    if (Date.now() > deadline) throw new Error('the export Jobs did not end within 30 s');
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Ends every browse and edit session (another function's scenario may have started one) and waits until their Pods are gone. */
export async function endSessions(c: ClusterHarness): Promise<void> {
  const kc = c.kubeConfig(c.adminToken);
  const core = kc.makeApiClient(CoreV1Api);
  for (const selector of ['felis.lolicon.best/files-browse=true', 'felis.lolicon.best/files-edit=true']) {
    await kc.makeApiClient(BatchV1Api).deleteCollectionNamespacedJob({ namespace: 'minecraft', labelSelector: selector, propagationPolicy: 'Background' });
    const deadline = Date.now() + 30_000;
    while ((await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: selector })).items.length > 0) {
      if (Date.now() > deadline) throw new Error(`${selector} Pods did not go within 30 s`);
      await new Promise((res) => setTimeout(res, 50));
    }
  }
}

/** Waits until no upload session receiver runs (the previous run's commit ended it). */
export async function uploadSessionsEnded(c: ClusterHarness): Promise<void> {
  const core = c.kubeConfig(c.adminToken).makeApiClient(CoreV1Api);
  const deadline = Date.now() + 30_000;
  const live = async () =>
    (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/upload-session' })).items.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  while ((await live()).length > 0) {
    if (Date.now() > deadline) throw new Error('upload session receivers did not end within 30 s');
    await new Promise((res) => setTimeout(res, 50));
  }
}

// The container calls (test/container/functions.container-test.ts).

/** What one request expects: its statuses, and (optionally) more about the answer or the world. */
export type Check = (body: any, s: Stack) => void | Promise<void>;
export interface ContainerCall {
  method: string;
  path: string | ((previous: any) => string);
  body?: unknown;
  headers?: Record<string, string>;
  status: number[];
  check?: Check;
  /** Before the call (e.g. a lapsed lock to clear). */
  setup?: (s: Stack) => Promise<void>;
}

export const uploadHeaders = (text: string) => ({
  'content-type': 'application/octet-stream',
  'content-digest': `sha-256=:${createHash('sha256').update(text).digest('base64')}:`,
});
/** A background op's answer: the op it started, then waited for through the stack. */
export const opEnds =
  (state: string): Check =>
  async (body, s) => {
    const op = await waitOp(s, body.op.id, undefined, 120_000);
    assert.equal(op.state, state, JSON.stringify(op));
  };

/**
 * Where a function's container calls run among the others (its kit's `containerOrder`): they share
 * one world, so some use what others leave in it: `after` names those; `first` and `last` run before
 * and after every other. Without one, and among equals, the folders' order.
 */
export type Place = { after: readonly string[] } | 'first' | 'last';

/** `names` (the folders' order) in the order their places ask; throws on a name or a circle it cannot place. */
export function runOrder(names: readonly string[], places: Readonly<Record<string, Place>>): string[] {
  for (const n of Object.keys(places)) if (!names.includes(n)) throw new Error(`a place for ${n}, which is not one of the functions`);
  const placeOf = (n: string) => places[n];
  const first = names.filter((n) => placeOf(n) === 'first');
  const last = names.filter((n) => placeOf(n) === 'last');
  const done = new Set(first);
  const middle = names.filter((n) => !done.has(n) && !last.includes(n));
  for (const n of middle) {
    const p = placeOf(n);
    for (const a of typeof p === 'object' ? p.after : [])
      if (!names.includes(a) || last.includes(a)) throw new Error(`${n} runs after ${a}, which ${names.includes(a) ? 'runs last' : 'is not one of the functions'}`);
  }
  const out = [...first];
  while (out.length < first.length + middle.length) {
    const next = middle.find((n) => {
      const p = placeOf(n);
      return !done.has(n) && (typeof p === 'object' ? p.after : []).every((a) => done.has(a));
    });
    if (!next) throw new Error(`a circle among ${middle.filter((n) => !done.has(n)).join(', ')}`);
    out.push(next);
    done.add(next);
  }
  return [...out, ...last];
}

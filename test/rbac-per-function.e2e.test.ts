/**
 * Each function holds exactly the Kubernetes verbs it uses, in both directions: every function runs
 * its routes' scenarios as its own ServiceAccount against the embedded cluster, whose RBAC is the
 * per-function Roles assembled from knative/; the calls it made (the cluster counts them per user,
 * denied ones included) must equal what its Role grants. A verb the Role lacks shows as a denied
 * call and a failed scenario; a verb the Role grants but no scenario uses shows as unused.
 * Each scenario runs twice: in token mode, and in kubernetes auth mode, where the function also
 * creates TokenReviews and SubjectAccessReviews, which its system:auth-delegator binding grants.
 * `npm run test:cluster` runs the same against the real apiserver, each function with its own token.
 * Every answer is checked against docs/openapi.json (test/support/openapi-check.ts).
 */

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AuthorizationV1Api, BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { dump } from 'js-yaml';
import type { ClusterHarness } from '../cluster/harness.ts';
import { startCluster } from '../cluster/index.ts';
import { readControlPlaneEnv } from '../cluster/real/admin.ts';
import { startRealCluster } from '../cluster/real/index.ts';
import { FUNCTIONS } from '../functions/index.ts';
import { Journal } from '../job/journal/journal.ts';
import { ensureJobKeyFile } from '../lib/browse/key-file.ts';
import { configFromEnv } from '../lib/config.ts';
import { authFromEnv } from '../lib/http/auth.ts';
import { buildDeps } from '../lib/http/deps.ts';
import { createHostApp } from '../lib/http/host.ts';
import { jobFinished } from '../lib/kube/job-facts.ts';
import { createLogger } from '../lib/log.ts';
import { GRACE_MS, lockValue } from '../lib/maintenance/holder.ts';
import { WORK_PREFIX } from '../lib/protocol/working-names.ts';
import { seedDemoWorld } from '../scripts/demo-world.ts';
import { assemble, type Obj } from './support/kustomize.ts';
import { checkedApp, loadChecker } from './support/openapi-check.ts';
import { createJob, createServer, holderJob, STOPPED, setServer } from './support/servers.ts';
import { ROOT } from './support/stack.ts';

const CLUSTER_ENV = process.env.FELIS_TEST_CLUSTER_ENV || undefined;

const TOKEN = 'rbac-test-token';
const checker = loadChecker();
const CALLER = 'felis-rbac-caller';
const CALLER_BINDING = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: ${CALLER} }
subjects: [{ kind: ServiceAccount, name: ${CALLER}, namespace: minecraft }]
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: felis-world-operator }
`;
const LOCK = 'felis.lolicon.best/maintenance';
const sha = (b: string) => createHash('sha256').update(b).digest('hex');
const q = encodeURIComponent;

/** A body is JSON, or raw bytes with their own headers (an upload); a path may use the previous answer. */
type Call = [method: string, path: string | ((previous: any) => string), body?: unknown];
type RawBody = { raw: Buffer; headers: Record<string, string> };
const isRaw = (b: unknown): b is RawBody => typeof b === 'object' && b !== null && 'raw' in b;
const upload = (text: string): RawBody => ({
  raw: Buffer.from(text),
  headers: { 'content-length': String(Buffer.byteLength(text)), 'content-digest': `sha-256=:${createHash('sha256').update(text).digest('base64')}:` },
});
/** `tag` makes the names of what a setup creates unique to one run. */
type Setup = (c: ClusterHarness, tag: string) => Promise<void>;

/** The data folder of the suite's cluster (its worlds are under it); set before the scenarios run. */
let suiteDir = '';

/**
 * Leaves in survival's world the journal of an extraction killed while staging, naming a Job of
 * its own op id: the scenario's mutation Job recovers it first and says so, and its function
 * records on that Job what became of the op (`jobs patch`).
 */
const interruptedExtraction: Setup = async (c, tag) => {
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
async function stagedPull(c: ClusterHarness): Promise<void> {
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
async function backgroundOpsEnded(c: ClusterHarness): Promise<void> {
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
async function exportsEnded(c: ClusterHarness): Promise<void> {
  const batch = c.kubeConfig(c.adminToken).makeApiClient(BatchV1Api);
  const deadline = Date.now() + 30_000;
  while (!(await batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'app.kubernetes.io/managed-by=felis-export' })).items.every(jobFinished)) {
    if (Date.now() > deadline) throw new Error('the export Jobs did not end within 30 s');
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Ends every browse and edit session (another function's scenario may have started one) and waits until their Pods are gone. */
async function endSessions(c: ClusterHarness): Promise<void> {
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
async function uploadSessionsEnded(c: ClusterHarness): Promise<void> {
  const core = c.kubeConfig(c.adminToken).makeApiClient(CoreV1Api);
  const deadline = Date.now() + 30_000;
  const live = async () =>
    (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/upload-session' })).items.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  while ((await live()).length > 0) {
    if (Date.now() > deadline) throw new Error('upload session receivers did not end within 30 s');
    await new Promise((res) => setTimeout(res, 50));
  }
}

/**
 * What each function's routes do, enough to reach every Kubernetes call they can make: reads and
 * listings on a stopped server, each mutation (which takes and releases the world lock), the
 * holder views, start and stop, an unlock that removes a stale lock, and a settling pass that
 * starts a restore.
 */
const SCENARIOS: Record<string, { setup?: Setup; calls: Call[] }> = {
  // With browse sessions on (and no session up to begin with): the first request starts one and
  // runs its one-shot Job, the later ones may be answered by the session.
  'files-list': { setup: endSessions, calls: [1, 2, 3].map((): Call => ['GET', '/api/v1/servers/survival/files']) },
  'files-read': { setup: endSessions, calls: [1, 2, 3].map((): Call => ['GET', `/api/v1/servers/survival/file?path=${q('eula.txt')}`]) },
  'files-search': { setup: endSessions, calls: [1, 2, 3].map((): Call => ['GET', `/api/v1/servers/survival/files/search?q=${q('*.txt')}`]) },
  // Each sync mutation first finds an interrupted extraction to recover (and record).
  'files-write': {
    setup: interruptedExtraction,
    calls: [['PUT', `/api/v1/servers/survival/file?path=${q('notes.txt')}`, { content: Buffer.from('hi').toString('base64'), content_sha256: sha('hi') }]],
  },
  'files-mkdir': { setup: interruptedExtraction, calls: [['POST', `/api/v1/servers/survival/files/mkdir?path=${q('newdir')}`]] },
  'files-delete': { setup: interruptedExtraction, calls: [['DELETE', `/api/v1/servers/survival/file?path=${q('plugins/README.txt')}`]] },
  'files-rename': { setup: interruptedExtraction, calls: [['POST', `/api/v1/servers/survival/files/rename?path=${q('eula.txt')}`, { to: 'eula.old' }]] },
  // A file of its own (earlier scenarios move and delete the demo world's), changed, moved and deleted.
  'files-batch': {
    setup: async (c, tag) => {
      await interruptedExtraction(c, tag);
      writeFileSync(join(suiteDir, 'worlds', 'survival', 'batch.txt'), 'many\n');
    },
    calls: [
      ['POST', '/api/v1/servers/survival/files/chmod', { files: [{ path: 'batch.txt', mode: '640' }] }],
      ['POST', '/api/v1/servers/survival/files/move', { moves: [{ from: 'batch.txt', to: 'batch.moved' }] }],
      ['POST', '/api/v1/servers/survival/files/delete', { paths: ['batch.moved'] }],
    ],
  },
  // Starting a background op is checks, the lock and one create; the op's own Job then holds the
  // world, so the next scenario (and the same one's second run) waits for it to end (the listing
  // reads its finished Pod's log).
  'files-unzip': { setup: backgroundOpsEnded, calls: [['POST', `/api/v1/servers/survival/files/unzip?path=${q('missing.zip')}`, { overwrite: false }]] },
  'files-zip': { setup: backgroundOpsEnded, calls: [['POST', `/api/v1/servers/survival/files/zip?path=${q('plugins')}`, {}]] },
  // A documentation address (TEST-NET-1): the pull Job's guard refuses it before any packet leaves.
  'files-pull': { setup: backgroundOpsEnded, calls: [['POST', '/api/v1/servers/survival/files/pull', { url: 'http://192.0.2.1/plugin.jar', path: 'plugins' }]] },
  // Its default name carries the second it was asked in: a second run makes a new archive.
  'files-compress': { setup: backgroundOpsEnded, calls: [['POST', '/api/v1/servers/survival/files/compress', { paths: ['plugins', 'eula.txt'], format: 'tar.zst' }]] },
  // A small file: one sync Job (which first recovers an interrupted extraction); a folder: a sync
  // Job that refuses it, then the background Job.
  'files-copy': {
    setup: async (c, tag) => {
      await backgroundOpsEnded(c); // the previous run's folder copy holds the world until it ends
      await interruptedExtraction(c, tag);
    },
    calls: [
      ['POST', `/api/v1/servers/survival/files/copy?path=${q('eula.txt')}`, {}],
      ['POST', `/api/v1/servers/survival/files/copy?path=${q('plugins')}`, {}],
    ],
  },
  'files-ops': { setup: backgroundOpsEnded, calls: [['GET', '/api/v1/servers/survival/files/ops']] },
  // The undo trash: its listing (a read-only Job), then a purge of everything (a sync mutation under
  // the lock, which first recovers an interrupted extraction and records it). Needs the Job side of
  // the trash (job/trash/).
  'files-trash': {
    setup: interruptedExtraction,
    calls: [
      ['GET', '/api/v1/servers/survival/files/trash'],
      ['DELETE', '/api/v1/servers/survival/files/trash'],
    ],
  },
  // One receiver Job per upload: created, its Pod found by label and called on its address.
  'files-upload': { calls: [['PUT', `/api/v1/servers/survival/files/upload?path=${q('plugins/up.txt')}&overwrite=true`, upload('uploaded\n')]] },
  // A session: begun (a receiver Job under the lock), a part, its status, committed.
  'files-uploads': {
    setup: uploadSessionsEnded,
    calls: [
      ['POST', `/api/v1/servers/survival/files/uploads?path=${q('plugins/session.txt')}`, { size: 9 }],
      ['PUT', (v) => `/api/v1/servers/survival/files/uploads/${v.id}?offset=0`, upload('uploaded\n')],
      ['GET', (v) => `/api/v1/servers/survival/files/uploads/${v.id}`],
      ['POST', (v) => `/api/v1/servers/survival/files/uploads/${v.id}/commit`, { overwrite: true }],
    ],
  },
  holder: {
    calls: [
      ['GET', '/api/v1/servers/survival/holder'],
      ['GET', '/api/v1/holders'],
    ],
  },
  start: {
    calls: [
      ['POST', '/api/v1/servers/survival/start'],
      ['POST', '/api/v1/servers/survival/stop'],
    ],
  },
  'world-lock': {
    setup: (c) => setServer(c, 'survival', { annotations: { [LOCK]: lockValue('backup', new Date(Date.now() - GRACE_MS - 1000)) } }),
    calls: [['DELETE', '/api/v1/servers/survival/lock']],
  },
  // A finished restore chain, and a pull of survival's that ended staged: the pass starts the
  // restore, then places the pull (the gates, the world's line, the placement Job, which finds no
  // staging here and says so) and records the outcome on the pull's Job.
  settle: {
    async setup(c, tag) {
      await stagedPull(c);
      await createServer(c, `chain${tag}`, STOPPED);
      await createJob(
        c,
        holderJob(
          `b-chain${tag}`,
          `chain${tag}`,
          'felis-backup',
          ['sh', '-c', 'sleep 30'],
          { 'felis.lolicon.best/then-restore': 'pending' },
          {
            'felis.lolicon.best/restore-ref': `s3://backups/chain${tag}/1.tar.zst`,
            'felis.lolicon.best/restore-backup-id': '1',
          },
        ),
      );
      await c.setJobConditions('minecraft', `b-chain${tag}`, [
        { type: 'SuccessCriteriaMet', status: 'True' },
        { type: 'Complete', status: 'True' },
      ]);
    },
    calls: [['POST', '/api/v1/restore-chains/settle']],
  },
  // Signing is the gates alone; the GET on the signed URL takes the export lock, creates the
  // export Job, finds its Pod and streams the file. Last, and after the previous download ended:
  // its Job holds the world until the Pod has served.
  'files-download': {
    setup: exportsEnded,
    calls: [
      ['POST', `/api/v1/servers/survival/files/download?path=${q('eula.txt')}`],
      ['GET', (previous) => new URL((previous as { url: string }).url, 'http://origin.invalid').pathname],
    ],
  },
};

/** What the bootstrap ClusterRole system:auth-delegator grants (a real apiserver defines it). */
const AUTH_DELEGATOR = new Map([
  ['create tokenreviews', 'authentication.k8s.io'],
  ['create subjectaccessreviews', 'authorization.k8s.io'],
]);

/** The grants `serviceAccount` gets cluster-wide: system:auth-delegator's, where a ClusterRoleBinding gives it. */
function clusterGrantsOf(objs: Obj[], serviceAccount: string): Set<string> {
  const bindings = objs.filter((o) => o.kind === 'ClusterRoleBinding' && o.subjects?.some((s: { kind: string; name: string }) => s.kind === 'ServiceAccount' && s.name === serviceAccount));
  const out = new Set<string>();
  for (const b of bindings) {
    assert.equal(b.roleRef.name, 'system:auth-delegator', `${b.metadata.name}: a function is bound to no other ClusterRole`);
    for (const g of AUTH_DELEGATOR.keys()) out.add(g);
  }
  return out;
}

/** `<verb> <resource>` for every rule of the Role bound to `serviceAccount` (the cluster's count keys). */
function grantsOf(objs: Obj[], serviceAccount: string): Set<string> {
  const binding = objs.find((o) => o.kind === 'RoleBinding' && o.subjects?.some((s: { kind: string; name: string }) => s.kind === 'ServiceAccount' && s.name === serviceAccount));
  assert.ok(binding, `a RoleBinding for ServiceAccount ${serviceAccount}`);
  const role = objs.find((o) => o.kind === 'Role' && o.metadata.name === binding.roleRef.name);
  assert.ok(role, `Role ${binding.roleRef.name}`);
  const out = new Set<string>();
  for (const r of role.rules ?? []) for (const v of r.verbs) for (const res of r.resources) out.add(`${v} ${res}`);
  return out;
}

/** Calls made without a grant, and grants never called. */
export function compareGrants(used: Iterable<string>, granted: Set<string>): { missing: string[]; unused: string[] } {
  const u = new Set(used);
  return { missing: [...u].filter((k) => !granted.has(k)).sort(), unused: [...granted].filter((k) => !u.has(k)).sort() };
}

/** The ServiceAccount each function's Knative Service runs as. */
function serviceAccountOf(objs: Obj[], fn: string): string {
  const svc = objs.find((o) => o.kind === 'Service' && o.apiVersion === 'serving.knative.dev/v1' && o.metadata.name === `felis-world-${fn}`);
  assert.ok(svc, `Knative Service ${fn}`);
  const sa = svc.spec.template.spec.serviceAccountName as string;
  assert.ok(sa, `${fn} names its serviceAccountName`);
  return sa;
}

describe('per-function RBAC: each Role grants exactly what its function calls', () => {
  // Both auth modes run here, so with the kubernetes-auth component's bindings.
  const objs = assemble(join(ROOT, 'knative'), { components: ['kubernetes-auth'] });
  let dir: string;
  let cluster: ClusterHarness;
  let template: string;
  let rbacFile: string;
  let callerToken: string;

  /**
   * The functions' identities as one manifest. The event source's Job watcher (knative/components/eventing)
   * is Knative's adapter, not a function: its grants are no function's.
   */
  function functionRbac(list: Obj[]): string {
    const rbacKinds = new Set(['ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);
    const functionIds = new Set(Object.keys(FUNCTIONS).map((f) => `felis-world-${f}`));
    const forFunction = (o: Obj) => functionIds.has(o.metadata.name) || (o.kind === 'ClusterRoleBinding' && o.subjects?.every((x: { name: string }) => functionIds.has(x.name)));
    const rbac = list.filter((o) => rbacKinds.has(o.kind) && (o.kind === 'ServiceAccount' || forFunction(o)));
    return rbac.map((o) => dump(o)).join('---\n');
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'felis-rbac-'));
    suiteDir = dir;
    rbacFile = join(dir, 'rbac.yaml');
    writeFileSync(rbacFile, functionRbac(objs));
    template = join(dir, 'restore.yaml');
    writeFileSync(
      template,
      dump({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { labels: { 'felis.lolicon.best/backup-id': '{{backupId}}' } },
        spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'restore', image: 'felis-test/restore', command: ['sh', '-c', 'sleep 30'] }] } } },
      }),
    );
    seedDemoWorld(dir, 'survival');
    cluster = CLUSTER_ENV
      ? await startRealCluster({ env: readControlPlaneEnv(CLUSTER_ENV), dataDir: dir, rbacManifest: rbacFile })
      : await startCluster({ dataDir: dir, rbacManifest: rbacFile, ttlScale: 0.01 });
    await cluster.applyRbac(functionRbac(objs));
    // The caller of the kubernetes-mode runs: an operator of every server, settling included.
    await cluster.applyRbac(readFileSync(join(ROOT, 'knative/examples/roles.yaml'), 'utf8') + '---\n' + CALLER_BINDING);
    callerToken = await cluster.requestToken('minecraft', CALLER, ['felis-world']);
    await awaitGrants(objs);
  });

  /**
   * The real apiserver applies Role changes asynchronously: wait until it answers every function's
   * grants as `objs` has them (the embedded cluster applies them at once, so this returns at once).
   */
  async function awaitGrants(manifest: Obj[]): Promise<void> {
    if (!CLUSTER_ENV) return;
    const groupOf = new Map<string, string>();
    for (const r of objs.filter((o) => o.kind === 'Role')) for (const rule of r.rules) for (const res of rule.resources) groupOf.set(res, rule.apiGroups[0]);
    const sar = cluster.kubeConfig(cluster.adminToken).makeApiClient(AuthorizationV1Api);
    for (const [g, group] of AUTH_DELEGATOR) groupOf.set(g.split(' ')[1]!, group);
    const all = new Set(Object.keys(FUNCTIONS).flatMap((fn) => [...grantsOf(objs, serviceAccountOf(objs, fn)), ...clusterGrantsOf(objs, serviceAccountOf(objs, fn))]));
    const deadline = Date.now() + 15_000;
    for (const fn of Object.keys(FUNCTIONS)) {
      const sa = serviceAccountOf(manifest, fn);
      const want = new Set([...grantsOf(manifest, sa), ...clusterGrantsOf(manifest, sa)]);
      for (const g of all) {
        const [verb, res] = g.split(' ') as [string, string];
        const [resource, subresource] = res.split('/');
        const group = groupOf.get(res) ?? '';
        for (;;) {
          const r = await sar.createSubjectAccessReview({
            body: { spec: { user: `system:serviceaccount:minecraft:${sa}`, resourceAttributes: { namespace: 'minecraft', verb, group, resource, subresource } } },
          });
          if (!!r.status?.allowed === want.has(g)) break;
          if (Date.now() > deadline) throw new Error(`RBAC for ${sa} did not converge within 15 s (${g})`);
          await new Promise((res) => setTimeout(res, 50));
        }
      }
    }
    for (;;) {
      const r = await sar.createSubjectAccessReview({ body: { spec: { user: `system:serviceaccount:minecraft:${CALLER}`, nonResourceAttributes: { path: '/felis-world/settle', verb: 'post' } } } });
      if (r.status?.allowed) break;
      if (Date.now() > deadline) throw new Error('RBAC for the caller did not converge within 15 s');
      await new Promise((res) => setTimeout(res, 50));
    }
  }
  after(async () => {
    // The real control plane outlives this suite: leave no cluster-wide grant behind.
    if (cluster) {
      await cluster.deleteRbac('ClusterRoleBinding', CALLER);
      for (const o of objs) if (o.kind === 'ClusterRoleBinding') await cluster.deleteRbac('ClusterRoleBinding', o.metadata.name);
    }
    await cluster?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `fn`'s scenario as its ServiceAccount; the answers and the calls the cluster counted for it. */
  async function run(fn: string, mode: 'token' | 'kubernetes' = 'token'): Promise<{ statuses: string[]; used: string[]; user: string }> {
    const sa = serviceAccountOf(objs, fn);
    const user = `system:serviceaccount:minecraft:${sa}`;
    const logger = createLogger(fn, { LOG_LEVEL: 'silent' });
    const editor = configFromEnv({ FELIS_IMAGE: 'felis-world/files:dev' }).editor!;
    const kc = cluster.kubeConfig(cluster.tokenFor('minecraft', sa));
    const downloads = fn === 'files-download' ? configFromEnv({ FELIS_JOB_KEY_FILE: ensureJobKeyFile(dir) }).downloads : undefined;
    // The functions that hold the job key in the manifests run with it (files-write: streamed
    // writes; every small change: edit sessions, none up to begin with, none waited for).
    const keyed = ['files-list', 'files-read', 'files-search', 'files-write', 'files-copy', 'files-mkdir', 'files-delete', 'files-rename', 'files-batch'].includes(fn) || fn.startsWith('files-upload');
    const browse = keyed ? { ...configFromEnv({ FELIS_JOB_KEY_FILE: ensureJobKeyFile(dir) }).browse!, startBudgetMs: 0 } : undefined;
    const deps = buildDeps(kc, { namespace: 'minecraft', editor, logger, restoreTemplate: template, browse, downloads });
    const auth = authFromEnv({ FELIS_AUTH_MODE: mode, FELIS_TOKEN: TOKEN, FELIS_NAMESPACE: 'minecraft' }, kc, logger);
    const { app, assertClean } = checkedApp(createHostApp({ logger, auth }, deps, [FUNCTIONS[fn]!]), checker);
    const token = mode === 'token' ? TOKEN : callerToken;
    const sc = SCENARIOS[fn]!;
    if (mode === 'kubernetes') {
      // The second run of a scenario starts from the same world as the first.
      rmSync(join(dir, 'worlds', 'survival'), { recursive: true, force: true });
      seedDemoWorld(dir, 'survival');
    }
    // A session left by an earlier scenario would answer without the calls this one must show.
    if (browse) await endSessions(cluster);
    const before = cluster.counts(user);
    await sc.setup?.(cluster, mode === 'token' ? '' : '-k');
    const statuses: string[] = [];
    let previous: unknown;
    for (const [method, p, body] of sc.calls) {
      const path = typeof p === 'function' ? p(previous) : p;
      const res = await app.request(path, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(isRaw(body) ? body.headers : body ? { 'content-type': 'application/json' } : {}) },
        body: isRaw(body) ? body.raw : body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      try {
        previous = JSON.parse(text) ?? previous;
      } catch {
        // not JSON: keep the previous answer
      }
      statuses.push(`${method} ${path} → ${res.status} ${text}`);
    }
    const after = cluster.counts(user);
    const used = Object.keys(after).filter((k) => after[k]! > (before[k] ?? 0));
    await assertClean();
    return { statuses, used, user };
  }

  test('every function has a scenario and a Knative Service, and no two share a ServiceAccount', () => {
    assert.deepEqual(Object.keys(SCENARIOS).sort(), Object.keys(FUNCTIONS).sort());
    const sas = Object.keys(FUNCTIONS).map((fn) => serviceAccountOf(objs, fn));
    assert.equal(new Set(sas).size, sas.length);
  });

  before(async () => {
    // The server every scenario works on, created once (settle creates its own).
    await createServer(cluster, 'survival', STOPPED);
  });

  for (const fn of Object.keys(SCENARIOS)) {
    test(`${fn}: its calls succeed and equal its Role's grants`, async () => {
      const { statuses, used } = await run(fn);
      for (const s of statuses) assert.match(s, / → 2\d\d/, `${fn}: ${s}`);
      const diff = compareGrants(used, grantsOf(objs, serviceAccountOf(objs, fn)));
      assert.deepEqual(diff, { missing: [], unused: [] }, `${fn} used ${JSON.stringify(used.sort())}; answers: ${statuses.join('; ')}`);
    });
    test(`${fn}, kubernetes auth mode: it also reviews tokens and access, exactly as system:auth-delegator grants`, async () => {
      const { statuses, used } = await run(fn, 'kubernetes');
      for (const s of statuses) assert.match(s, / → 2\d\d/, `${fn}: ${s}`);
      const sa = serviceAccountOf(objs, fn);
      const cluster = clusterGrantsOf(objs, sa);
      assert.deepEqual([...cluster].sort(), [...AUTH_DELEGATOR.keys()].sort(), `${fn}: bound to system:auth-delegator`);
      const diff = compareGrants(used, new Set([...grantsOf(objs, sa), ...cluster]));
      assert.deepEqual(diff, { missing: [], unused: [] }, `${fn} used ${JSON.stringify(used.sort())}; answers: ${statuses.join('; ')}`);
    });
  }

  test('a Role missing a verb its function uses fails the scenario; a grant nobody uses is reported', async () => {
    // files-read without `get pods/log`: the result line cannot be read, so the read cannot answer 200.
    const cut = objs.map((o) => structuredClone(o));
    const role = cut.find((o) => o.kind === 'Role' && o.metadata.name === serviceAccountOf(objs, 'files-read'))!;
    role.rules = role.rules.filter((r: { resources: string[] }) => !r.resources.includes('pods/log'));
    const cutFile = join(dir, 'rbac-cut.yaml');
    writeFileSync(cutFile, functionRbac(cut));
    await cluster.setRbacManifest(cutFile);
    await awaitGrants(cut);
    try {
      const { statuses, used } = await run('files-read');
      assert.doesNotMatch(statuses[0]!, / → 2\d\d/);
      assert.ok(compareGrants(used, grantsOf(cut, serviceAccountOf(cut, 'files-read'))).missing.includes('get pods/log'));
    } finally {
      await cluster.setRbacManifest(rbacFile);
      await awaitGrants(objs);
    }
    // A grant added to holder's Role and never called shows as unused.
    const holder = grantsOf(objs, serviceAccountOf(objs, 'holder'));
    const { used } = await run('holder');
    assert.deepEqual(compareGrants(used, new Set([...holder, 'create jobs'])).unused, ['create jobs']);
  });
});

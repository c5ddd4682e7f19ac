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
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AuthorizationV1Api } from '@kubernetes/client-node';
import { dump } from 'js-yaml';
import type { ClusterHarness } from '../cluster/harness.ts';
import { startCluster } from '../cluster/index.ts';
import { readControlPlaneEnv } from '../cluster/real/admin.ts';
import { startRealCluster } from '../cluster/real/index.ts';
import { FUNCTIONS } from '../functions/index.ts';
import { ensureJobKeyFile } from '../lib/browse/key-file.ts';
import { configFromEnv } from '../lib/config.ts';
import { authFromEnv } from '../lib/http/auth.ts';
import { buildDeps } from '../lib/http/deps.ts';
import { createHostApp } from '../lib/http/host.ts';
import { createLogger } from '../lib/log.ts';
import { seedDemoWorld } from '../scripts/demo-world.ts';
import { RBAC_SCENARIOS as SCENARIOS } from './support/function-e2e.generated.test-kit.ts';
import { backgroundOpsEnded, endSessions, exportsEnded, isRaw, setSuiteDir, uploadSessionsEnded } from './support/function-e2e.ts';
import { assemble, type Obj } from './support/kustomize.ts';
import { checkedApp, loadChecker } from './support/openapi-check.ts';
import { createServer, STOPPED } from './support/servers.ts';
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
    setSuiteDir(dir);
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

  async function firstChunk(res: Response): Promise<string> {
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    await reader.cancel();
    return new TextDecoder().decode(value);
  }

  /** Runs `fn`'s scenario as its ServiceAccount; the answers and the calls the cluster counted for it. */
  async function run(fn: string, mode: 'token' | 'kubernetes' = 'token'): Promise<{ statuses: string[]; used: string[]; user: string }> {
    const sa = serviceAccountOf(objs, fn);
    const user = `system:serviceaccount:minecraft:${sa}`;
    const logger = createLogger(fn, { LOG_LEVEL: process.env.RBAC_LOG ?? 'silent' });
    const editor = configFromEnv({ FELIS_IMAGE: 'felis-world/files:dev' }).editor!;
    const kc = cluster.kubeConfig(cluster.tokenFor('minecraft', sa));
    const downloads = fn === 'files-download' ? configFromEnv({ FELIS_JOB_KEY_FILE: ensureJobKeyFile(dir) }).downloads : undefined;
    // The functions that hold the job key in the manifests run with it (files-write: streamed
    // writes; every small change: edit sessions, none up to begin with, none waited for).
    const keyed =
      ['files-list', 'files-read', 'files-search', 'files-usage', 'files-write', 'files-copy', 'files-mkdir', 'files-delete', 'files-rename', 'files-batch', 'files-tail'].includes(fn) ||
      fn.startsWith('files-upload');
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
    // The scenarios run in the folders' order, so each waits for what an earlier one may have left
    // holding the world (a background op, an export, an upload receiver) to end.
    await backgroundOpsEnded(cluster);
    await exportsEnded(cluster);
    await uploadSessionsEnded(cluster);
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
      // An event stream (a log follow) lasts minutes: its first event is enough, then the hang-up.
      const text = res.headers.get('content-type')?.startsWith('text/event-stream') ? await firstChunk(res) : await res.text();
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

  // What each function's routes do (its folder's e2e.test-kit.ts), enough to reach every Kubernetes
  // call they can make: reads and listings on a stopped server, each mutation (which takes and
  // releases the world lock), the holder views, start and stop, an unlock that removes a stale lock,
  // and a settling pass that starts a restore.
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

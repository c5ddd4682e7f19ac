import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApiException, BatchV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { FELIS_USER, PRODUCT_RBAC_MANIFEST, RBAC_MANIFEST, rawFetch, shJob, statusOf, type TestCluster, testCluster, waitFor } from './cluster.test-kit.ts';

const IN_NS = 'in the namespace "minecraft"';

describe('authentication, RBAC and request counting', () => {
  let t: TestCluster;
  let batch: BatchV1Api;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  let tmp: string;

  before(async () => {
    t = await testCluster();
    const kc = t.cluster.kubeConfig(t.cluster.tokenFor('minecraft', 'felis-world'));
    batch = kc.makeApiClient(BatchV1Api);
    core = kc.makeApiClient(CoreV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
    tmp = mkdtempSync(join(tmpdir(), 'felis-rbac-'));
  });
  after(async () => {
    await t.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('401 for an unknown token (client-node: code 401, body undefined)', async () => {
    const bad = t.cluster.kubeConfig('not-a-token').makeApiClient(CoreV1Api);
    await assert.rejects(bad.listNamespacedPod({ namespace: 'minecraft' }), (err: unknown) => {
      assert.ok(err instanceof ApiException);
      assert.equal(err.code, 401);
      assert.equal(err.body, undefined);
      return true;
    });
    const res = await rawFetch(t.cluster, '/api/v1/namespaces/minecraft/pods', { token: 'not-a-token' });
    assert.equal(res.status, 401);
    assert.equal(await res.text(), '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}\n');
  });

  // Found by the cluster tier: a real apiserver (anonymous auth on by default) treats a request
  // without a bearer token as system:anonymous, whom RBAC refuses with a 403, not a 401.
  it('no bearer token is system:anonymous: 403 from RBAC; health and version stay readable, discovery does not', async () => {
    for (const headers of [{}, { authorization: 'Bearer ' }, { authorization: 'Basic eDp5' }] as Record<string, string>[]) {
      const res = await rawFetch(t.cluster, '/api/v1/namespaces/minecraft/pods', { token: '', headers });
      assert.equal(res.status, 403, JSON.stringify(headers));
      assert.deepEqual(await res.json(), {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "minecraft"',
        reason: 'Forbidden',
        details: { kind: 'pods' },
        code: 403,
      });
    }
    assert.equal((await rawFetch(t.cluster, '/healthz', { token: '' })).status, 200);
    assert.equal((await rawFetch(t.cluster, '/version', { token: '' })).status, 200);
    const api = await rawFetch(t.cluster, '/api', { token: '' });
    assert.equal(api.status, 403);
    assert.equal((await api.json()).message, 'forbidden: User "system:anonymous" cannot get path "/api"');
  });

  it('the function identity may do exactly what the Role grants', async () => {
    const job = await batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('allowed', 'echo ok') });
    const pods = await waitFor(async () => (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: `job-name=allowed` })).items[0], 'pod');
    await waitFor(async () => (await t.core.readNamespacedPod({ namespace: 'minecraft', name: pods.metadata!.name! })).status?.phase === 'Succeeded' || undefined, 'done');
    assert.equal(await core.readNamespacedPodLog({ namespace: 'minecraft', name: pods.metadata!.name! }), 'ok\n');
    assert.equal(job.metadata!.name, 'allowed');
  });

  it('403 bodies: list without a name, get with a name, pods/log, a CR, another namespace', async () => {
    const getJob = await statusOf(batch.readNamespacedJob({ namespace: 'minecraft', name: 'allowed' }));
    assert.equal(getJob.code, 403);
    assert.deepEqual(getJob.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `jobs.batch "allowed" is forbidden: User "${FELIS_USER}" cannot get resource "jobs" in API group "batch" ${IN_NS}`,
      reason: 'Forbidden',
      details: { name: 'allowed', group: 'batch', kind: 'jobs' },
      code: 403,
    });
    const listJobs = await statusOf(batch.listNamespacedJob({ namespace: 'minecraft' }));
    assert.equal(listJobs.body.message, `jobs.batch is forbidden: User "${FELIS_USER}" cannot list resource "jobs" in API group "batch" ${IN_NS}`);
    assert.deepEqual(listJobs.body.details, { group: 'batch', kind: 'jobs' });
    const pods = await statusOf(core.listNamespacedPod({ namespace: 'default' }));
    assert.equal(pods.body.message, `pods is forbidden: User "${FELIS_USER}" cannot list resource "pods" in API group "" in the namespace "default"`);
    assert.deepEqual(pods.body.details, { kind: 'pods' });
    const getPod = await statusOf(core.readNamespacedPod({ namespace: 'minecraft', name: 'p' }));
    assert.equal(getPod.body.message, `pods "p" is forbidden: User "${FELIS_USER}" cannot get resource "pods" in API group "" ${IN_NS}`);
    const cr = await statusOf(custom.getNamespacedCustomObject({ group: 'felis.lolicon.best', version: 'v1alpha1', namespace: 'minecraft', plural: 'minecraftservers', name: 'survival' }));
    assert.equal(
      cr.body.message,
      `minecraftservers.felis.lolicon.best "survival" is forbidden: User "${FELIS_USER}" cannot get resource "minecraftservers" in API group "felis.lolicon.best" ${IN_NS}`,
    );
    assert.deepEqual(cr.body.details, { name: 'survival', group: 'felis.lolicon.best', kind: 'minecraftservers' });
    const del = await statusOf(batch.deleteNamespacedJob({ namespace: 'minecraft', name: 'allowed' }));
    assert.equal(del.code, 403);
  });

  it('watch is checked by RBAC first: 403 for the function identity', async () => {
    const res = await rawFetch(t.cluster, '/api/v1/namespaces/minecraft/pods?watch=true&labelSelector=a%3Db', {
      token: t.cluster.tokenFor('minecraft', 'felis-world'),
    });
    assert.equal(res.status, 403);
    const body = await res.json();
    assert.equal(body.message, `pods is forbidden: User "${FELIS_USER}" cannot watch resource "pods" in API group "" ${IN_NS}`);
  });

  it('a wrong Role gives a real 403 after reloading; a binding to a missing Role adds the RBAC reason', async () => {
    const wrong = join(tmp, 'wrong.yaml');
    writeFileSync(
      wrong,
      `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: felis-world, namespace: minecraft}
rules:
  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: felis-world, namespace: minecraft}
subjects: [{kind: ServiceAccount, name: felis-world, namespace: minecraft}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: felis-world}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dangling, namespace: minecraft}
subjects: [{kind: ServiceAccount, name: felis-world}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: gone}
`,
    );
    await t.cluster.setRbacManifest(wrong);
    try {
      const s = await statusOf(batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('denied', 'true') }));
      assert.equal(s.code, 403);
      assert.equal(s.body.message, `jobs.batch is forbidden: User "${FELIS_USER}" cannot create resource "jobs" in API group "batch" ${IN_NS}: RBAC: role.rbac.authorization.k8s.io "gone" not found`);
      const log = await statusOf(core.readNamespacedPodLog({ namespace: 'minecraft', name: 'mc-backup-1-m79xs' }));
      assert.equal(
        log.body.message,
        `pods "mc-backup-1-m79xs" is forbidden: User "${FELIS_USER}" cannot get resource "pods/log" in API group "" ${IN_NS}: RBAC: role.rbac.authorization.k8s.io "gone" not found`,
      );
      assert.deepEqual(log.body.details, { name: 'mc-backup-1-m79xs', kind: 'pods' });
      // Still allowed by the wrong Role.
      await core.listNamespacedPod({ namespace: 'minecraft' });
    } finally {
      await t.cluster.setRbacManifest(RBAC_MANIFEST);
    }
    await batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('allowed-again', 'true') });
  });

  it('ClusterRole, ClusterRoleBinding, resourceNames, subresources and * verbs', async () => {
    const path = join(tmp, 'cluster.yaml');
    writeFileSync(
      path,
      `kind: ClusterRole
apiVersion: rbac.authorization.k8s.io/v1
metadata: {name: reader}
rules:
  - apiGroups: ["felis.lolicon.best"]
    resources: ["minecraftservers"]
    resourceNames: ["survival"]
    verbs: ["get"]
  - apiGroups: ["felis.lolicon.best"]
    resources: ["minecraftservers/status"]
    verbs: ["*"]
---
kind: ClusterRoleBinding
apiVersion: rbac.authorization.k8s.io/v1
metadata: {name: reader}
subjects: [{kind: Group, name: "system:serviceaccounts:minecraft"}]
roleRef: {kind: ClusterRole, name: reader}
`,
    );
    await t.cluster.setRbacManifest(path);
    try {
      const CR = { group: 'felis.lolicon.best', version: 'v1alpha1', namespace: 'minecraft', plural: 'minecraftservers' };
      const a = await statusOf(custom.getNamespacedCustomObject({ ...CR, name: 'survival' }));
      assert.equal(a.code, 404, 'allowed by name: the object simply does not exist');
      const b = await statusOf(custom.getNamespacedCustomObject({ ...CR, name: 'creative' }));
      assert.equal(b.code, 403);
      const c = await statusOf(custom.getNamespacedCustomObjectStatus({ ...CR, name: 'creative' }));
      assert.equal(c.code, 404, 'the status subresource is allowed for any name');
      const d = await statusOf(custom.listNamespacedCustomObject({ ...CR }));
      assert.equal(d.code, 403, 'resourceNames never match a list');
    } finally {
      await t.cluster.setRbacManifest(RBAC_MANIFEST);
    }
  });

  it('counts requests by identity and verb/resource, allowed or not', async () => {
    t.cluster.resetCounts();
    await core.listNamespacedPod({ namespace: 'minecraft' });
    await core.listNamespacedPod({ namespace: 'minecraft' });
    await statusOf(batch.listNamespacedJob({ namespace: 'minecraft' }));
    await statusOf(core.readNamespacedPodLog({ namespace: 'minecraft', name: 'nopod' }));
    await t.core.listNamespacedPod({ namespace: 'default' });
    assert.deepEqual(t.cluster.counts(FELIS_USER), { 'list pods': 2, 'list jobs': 1, 'get pods/log': 1 });
    assert.deepEqual(t.cluster.counts('admin'), { 'list pods': 1 });
    assert.deepEqual(t.cluster.counts(), { 'list pods': 3, 'list jobs': 1, 'get pods/log': 1 });
    t.cluster.resetCounts();
    assert.deepEqual(t.cluster.counts(), {});
  });

  it('failNext injects a Status for matching requests only', async () => {
    t.cluster.faults.failNext({ verb: 'create', resource: 'jobs', user: FELIS_USER, code: 500, message: 'etcdserver: request timed out', times: 2 });
    for (let i = 0; i < 2; i++) {
      const s = await statusOf(batch.createNamespacedJob({ namespace: 'minecraft', body: shJob(`f${i}`, 'true') }));
      assert.equal(s.code, 500);
      assert.equal(s.body.reason, 'InternalError');
      assert.equal(s.body.message, 'etcdserver: request timed out');
    }
    await batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('f2', 'true') });
    t.cluster.faults.failNext({ verb: 'list', resource: 'pods', code: 429 });
    const s = await statusOf(core.listNamespacedPod({ namespace: 'minecraft' }));
    assert.equal(s.code, 429);
    assert.equal(s.body.reason, 'TooManyRequests');
    assert.equal(s.headers['retry-after'], '1');
    await core.listNamespacedPod({ namespace: 'minecraft' });
    t.cluster.faults.clear();
  });

  it("the product's knative/rbac.yaml loads and lets the function identity create Jobs", async () => {
    await t.cluster.setRbacManifest(PRODUCT_RBAC_MANIFEST);
    try {
      await batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('product-rbac', 'true') });
      const s = await statusOf(batch.deleteCollectionNamespacedJob({ namespace: 'minecraft' }));
      assert.equal(s.code, 403);
    } finally {
      await t.cluster.setRbacManifest(RBAC_MANIFEST);
    }
  });

  it('kubeconfigYaml is a loadable KUBECONFIG', async () => {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const kc = new KubeConfig();
    kc.loadFromString(t.cluster.kubeconfigYaml(t.cluster.adminToken));
    assert.equal(kc.getContextObject(kc.getCurrentContext())?.namespace, 'minecraft');
    const list = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'minecraft' });
    assert.ok(Array.isArray(list.items));
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { rawFetch, shJob, statusOf, type TestCluster, testCluster, waitFor } from './cluster.test-kit.ts';

const STATUS_KEYS = ['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'details', 'code'];

describe('API server: Status bodies, lists, namespaces', () => {
  let t: TestCluster;
  before(async () => {
    t = await testCluster();
  });
  after(() => t.close());

  it('404 for a missing Job, with group and plural kind', async () => {
    const s = await statusOf(t.batch.readNamespacedJob({ namespace: 'minecraft', name: 'nope' }));
    assert.equal(s.code, 404);
    assert.deepEqual(s.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'jobs.batch "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', group: 'batch', kind: 'jobs' },
      code: 404,
    });
    assert.deepEqual(Object.keys(s.body), STATUS_KEYS);
    assert.match(s.headers['content-type'] ?? '', /^application\/json/);
  });

  it('404 for a missing Pod has no group', async () => {
    const s = await statusOf(t.core.readNamespacedPod({ namespace: 'minecraft', name: 'nopod' }));
    assert.equal(s.body.message, 'pods "nopod" not found');
    assert.deepEqual(s.body.details, { name: 'nopod', kind: 'pods' });
  });

  it('404 for a missing custom resource', async () => {
    const s = await statusOf(
      t.custom.getNamespacedCustomObject({
        group: 'felis.lolicon.best',
        version: 'v1alpha1',
        namespace: 'minecraft',
        plural: 'minecraftservers',
        name: 'nope',
      }),
    );
    assert.equal(s.code, 404);
    assert.equal(s.body.message, 'minecraftservers.felis.lolicon.best "nope" not found');
    assert.deepEqual(s.body.details, { name: 'nope', group: 'felis.lolicon.best', kind: 'minecraftservers' });
  });

  it('create in a missing namespace is a 404 on the namespace; listing it is empty', async () => {
    const s = await statusOf(t.batch.createNamespacedJob({ namespace: 'other', body: shJob('x', 'true') }));
    assert.equal(s.code, 404);
    assert.equal(s.body.message, 'namespaces "other" not found');
    assert.deepEqual(s.body.details, { name: 'other', kind: 'namespaces' });
    const list = await t.batch.listNamespacedJob({ namespace: 'other' });
    assert.deepEqual(list.items, []);
  });

  it('409 AlreadyExists for a duplicate Job', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('dup', 'true') });
    const s = await statusOf(t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('dup', 'true') }));
    assert.equal(s.code, 409);
    assert.equal(s.body.reason, 'AlreadyExists');
    assert.equal(s.body.message, 'jobs.batch "dup" already exists');
    assert.deepEqual(s.body.details, { name: 'dup', group: 'batch', kind: 'jobs' });
  });

  it('413 for a body over 3 MiB', async () => {
    const big = JSON.stringify({ metadata: { name: 'big', annotations: { a: 'x'.repeat(3 * 1024 * 1024) } } });
    const res = await rawFetch(t.cluster, '/apis/batch/v1/namespaces/minecraft/jobs', {
      method: 'POST',
      body: big,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 413);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const body = await res.json();
    assert.deepEqual(body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Request entity too large: limit is 3145728',
      reason: 'RequestEntityTooLarge',
      code: 413,
    });
  });

  it('lists: kind, apiVersion, resourceVersion, items [] and no kind on built-in items', async () => {
    const empty = await rawFetch(t.cluster, '/api/v1/namespaces/default/pods');
    const raw = await empty.json();
    assert.equal(raw.kind, 'PodList');
    assert.equal(raw.apiVersion, 'v1');
    assert.deepEqual(raw.items, []);
    assert.match(raw.metadata.resourceVersion, /^\d+$/);

    await t.core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'game-0', labels: { app: 'mc' } }, spec: { containers: [{ name: 'mc', image: 'mc:1' }] } },
    });
    const res = await rawFetch(t.cluster, '/api/v1/namespaces/default/pods');
    const list = await res.json();
    assert.equal(list.items.length, 1);
    assert.equal(list.items[0].kind, undefined);
    assert.equal(list.items[0].apiVersion, undefined);
    assert.equal(list.items[0].status.phase, 'Pending');
    assert.ok(Number(list.metadata.resourceVersion) >= Number(list.items[0].metadata.resourceVersion));
  });

  it('resourceVersion increases on every write', async () => {
    const a = await t.core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'rv-a' }, spec: { containers: [{ name: 'c', image: 'i:1' }] } },
    });
    const b = await t.core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'rv-b' }, spec: { containers: [{ name: 'c', image: 'i:1' }] } },
    });
    assert.ok(Number(b.metadata!.resourceVersion) > Number(a.metadata!.resourceVersion));
    const patched = await t.core.patchNamespacedPodStatus({ namespace: 'default', name: 'rv-a', body: [{ op: 'replace', path: '/status/phase', value: 'Running' }] });
    assert.equal(patched.status!.phase, 'Running');
    assert.ok(Number(patched.metadata!.resourceVersion) > Number(b.metadata!.resourceVersion));
  });

  it('limit and continue page through a list in name order', async () => {
    for (const n of ['pg-c', 'pg-a', 'pg-b']) {
      await t.core.createNamespacedPod({
        namespace: 'default',
        body: { metadata: { name: n, labels: { page: 'yes' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } },
      });
    }
    const first = await t.core.listNamespacedPod({ namespace: 'default', labelSelector: 'page=yes', limit: 2 });
    assert.deepEqual(
      first.items.map((p) => p.metadata!.name),
      ['pg-a', 'pg-b'],
    );
    assert.ok(first.metadata!._continue);
    const second = await t.core.listNamespacedPod({
      namespace: 'default',
      labelSelector: 'page=yes',
      limit: 2,
      _continue: first.metadata!._continue,
    });
    assert.deepEqual(
      second.items.map((p) => p.metadata!.name),
      ['pg-c'],
    );
    assert.equal(second.metadata!._continue, undefined);
    // remainingItemCount only without selectors.
    const all = await t.core.listNamespacedPod({ namespace: 'default', limit: 1 });
    assert.ok((all.metadata!.remainingItemCount ?? 0) >= 1);
  });

  it('fieldSelector metadata.name and an unknown field', async () => {
    const l = await t.core.listNamespacedPod({ namespace: 'default', fieldSelector: 'metadata.name=game-0' });
    assert.deepEqual(
      l.items.map((p) => p.metadata!.name),
      ['game-0'],
    );
    const s = await statusOf(t.core.listNamespacedPod({ namespace: 'default', fieldSelector: 'spec.bogus=1' }));
    assert.equal(s.code, 400);
    assert.equal(s.body.reason, 'BadRequest');
  });

  it('non-integer limit is a 400', async () => {
    const res = await rawFetch(t.cluster, '/api/v1/namespaces/default/pods?limit=abc');
    assert.equal(res.status, 400);
    assert.equal((await res.json()).message, 'strconv.ParseInt: parsing "abc": invalid syntax');
  });

  it('an unknown resource is the generic 404', async () => {
    const res = await rawFetch(t.cluster, '/apis/batch/v1/namespaces/minecraft/cronjobz');
    assert.equal(res.status, 404);
    const body = await res.json();
    assert.equal(body.message, 'the server could not find the requested resource');
    assert.deepEqual(body.details, {});
  });

  it('Pod validation: containers required, restartPolicy defaulted', async () => {
    const s = await statusOf(t.core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'bad' }, spec: { containers: [] } } }));
    assert.equal(s.code, 422);
    assert.equal(s.body.message, 'Pod "bad" is invalid: spec.containers: Required value');
    assert.deepEqual(s.body.details, {
      name: 'bad',
      kind: 'Pod',
      causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' }],
    });
    const ok = await t.core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'defaults' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    });
    assert.equal(ok.spec!.restartPolicy, 'Always');
    assert.equal(ok.spec!.containers[0]!.imagePullPolicy, 'Always');
    assert.equal(ok.spec!.terminationGracePeriodSeconds, 30);
  });

  it('PersistentVolumeClaims: create binds, get, list, delete', async () => {
    const pvc = await t.core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: { metadata: { name: 'world-x-0' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    });
    assert.equal(pvc.status!.phase, 'Pending');
    const bound = await waitFor(async () => {
      const p = await t.core.readNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'world-x-0' });
      return p.status?.phase === 'Bound' ? p : undefined;
    }, 'pvc bound');
    assert.equal(bound.spec!.volumeName, `pvc-${pvc.metadata!.uid}`);
    const bad = await statusOf(t.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: { metadata: { name: 'nope' }, spec: {} } }));
    assert.equal(bad.code, 422);
    assert.match(bad.body.message, /spec\.accessModes: Required value: at least 1 access mode is required/);
    await t.core.deleteNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'world-x-0' });
    await waitFor(async () => (await t.core.listNamespacedPersistentVolumeClaim({ namespace: 'default' })).items.length === 0 || undefined, 'pvc gone');
  });

  it("watch streams changes from a list's resourceVersion; selectors see objects leave; too old is 410; Tables per event", async () => {
    const cm = (name: string, labels: Record<string, string>) => ({ metadata: { name, labels }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    const P = '/api/v1/namespaces/default/persistentvolumeclaims';
    await t.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: cm('w-before', { w: 'yes' }) });
    const list = await (await rawFetch(t.cluster, `${P}?labelSelector=w%3Dyes`)).json();
    const rv = list.metadata.resourceVersion as string;
    const ac = new AbortController();
    const res = await t.cluster.fetch(`${P}?watch=true&labelSelector=w%3Dyes&resourceVersion=${rv}`, { headers: { authorization: `Bearer ${t.cluster.adminToken}` }, signal: ac.signal });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    // Made after the list: replayed or live, each once, in order.
    await t.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: cm('w-after', { w: 'yes' }) });
    await t.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: cm('w-other', { w: 'no' }) });
    await t.core.patchNamespacedPersistentVolumeClaim(
      { namespace: 'default', name: 'w-after', body: { metadata: { labels: { w: 'gone' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('"DELETED"')) text += Buffer.from((await reader.read()).value!).toString();
    ac.abort();
    const events = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; object: { kind: string; apiVersion: string; metadata: { name: string } } });
    const seen = events.map((e) => `${e.type} ${e.object.metadata.name}`);
    // The claim's binding is a MODIFIED between; the one outside the selector never shows; leaving it is a DELETED.
    assert.equal(seen[0], 'ADDED w-after');
    assert.equal(seen.at(-1), 'DELETED w-after');
    assert.deepEqual(
      seen.slice(1, -1).filter((e) => e !== 'MODIFIED w-after'),
      [],
    );
    assert.equal(events[0]!.object.kind, 'PersistentVolumeClaim');
    assert.equal(events[0]!.object.apiVersion, 'v1');

    const old = await t.cluster.fetch(`${P}?watch=true&resourceVersion=1`, { headers: { authorization: `Bearer ${t.cluster.adminToken}` } });
    const err = JSON.parse((await old.text()).trim());
    assert.equal(err.type, 'ERROR');
    assert.equal(err.object.code, 410);
    assert.equal(err.object.reason, 'Expired');

    const ac2 = new AbortController();
    const tbl = await t.cluster.fetch(`${P}?watch=true&resourceVersion=0&labelSelector=w`, {
      headers: { authorization: `Bearer ${t.cluster.adminToken}`, accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
      signal: ac2.signal,
    });
    const r2 = tbl.body!.getReader();
    let t2 = '';
    while (t2.split('\n').length < 4) t2 += Buffer.from((await r2.read()).value!).toString();
    ac2.abort();
    const tables = t2
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      tables.map((e) => [e.type, e.object.kind, e.object.rows.length, e.object.columnDefinitions === null]),
      [
        ['ADDED', 'Table', 1, false],
        ['ADDED', 'Table', 1, true],
        ['ADDED', 'Table', 1, true],
      ],
    );
    for (const n of ['w-before', 'w-after', 'w-other']) await t.core.deleteNamespacedPersistentVolumeClaim({ namespace: 'default', name: n });
  });

  it('Status bodies come back through a second client instance too', async () => {
    const other = t.cluster.kubeConfig(t.cluster.adminToken).makeApiClient(CoreV1Api);
    const s = await statusOf(other.readNamespacedPod({ namespace: 'minecraft', name: 'ghost' }));
    assert.equal(s.code, 404);
  });
});

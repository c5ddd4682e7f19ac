import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { rawFetch, statusOf, type TestCluster, testCluster } from './cluster.test-kit.ts';

const CR = { group: 'felis.lolicon.best', version: 'v1alpha1', namespace: 'minecraft', plural: 'minecraftservers' };
const LOCK = 'felis.lolicon.best/maintenance';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

type Obj = { metadata: { name: string; resourceVersion: string; generation?: number; annotations?: Record<string, string> }; spec?: any; status?: any };

describe('MinecraftServer custom resource', () => {
  let t: TestCluster;
  let created: Obj;

  before(async () => {
    t = await testCluster();
  });
  after(() => t.close());

  beforeEach(async () => {
    await t.custom.deleteNamespacedCustomObject({ ...CR, name: 'survival' }).catch(() => undefined);
    created = (await t.custom.createNamespacedCustomObject({
      ...CR,
      body: {
        apiVersion: 'felis.lolicon.best/v1alpha1',
        kind: 'MinecraftServer',
        metadata: { name: 'survival', annotations: { keep: 'me' } },
        spec: { version: '1.21', stopped: true },
        status: { phase: 'ignored on create' },
      },
    })) as Obj;
  });

  it('create keeps the spec, drops status, sets generation 1', () => {
    assert.equal(created.spec.version, '1.21');
    assert.equal(created.status, undefined);
    assert.equal(created.metadata.generation, 1);
  });

  it('list items carry kind and apiVersion', async () => {
    const list = (await t.custom.listNamespacedCustomObject({ ...CR })) as { kind: string; items: Obj[] & { kind: string; apiVersion: string }[] };
    assert.equal(list.kind, 'MinecraftServerList');
    assert.equal(list.items[0]!.kind, 'MinecraftServer');
    assert.equal(list.items[0]!.apiVersion, 'felis.lolicon.best/v1alpha1');
  });

  it('merge patch: null deletes, a missing key is a no-op, resourceVersion grows', async () => {
    const locked = (await t.custom.patchNamespacedCustomObject({ ...CR, name: 'survival', body: { metadata: { annotations: { [LOCK]: 'file-write' } } } }, merge)) as Obj;
    assert.equal(locked.metadata.annotations![LOCK], 'file-write');
    assert.equal(locked.metadata.annotations!.keep, 'me');
    assert.ok(Number(locked.metadata.resourceVersion) > Number(created.metadata.resourceVersion));
    const unlocked = (await t.custom.patchNamespacedCustomObject({ ...CR, name: 'survival', body: { metadata: { annotations: { [LOCK]: null } } } }, merge)) as Obj;
    assert.equal(unlocked.metadata.annotations![LOCK], undefined);
    const again = (await t.custom.patchNamespacedCustomObject({ ...CR, name: 'survival', body: { metadata: { annotations: { [LOCK]: null } } } }, merge)) as Obj;
    assert.equal(again.metadata.resourceVersion, unlocked.metadata.resourceVersion);
  });

  it('a stale resourceVersion in the patch is a 409 with the optimistic-lock message', async () => {
    await t.custom.patchNamespacedCustomObject({ ...CR, name: 'survival', body: { metadata: { labels: { a: 'b' } } } }, merge);
    const s = await statusOf(
      t.custom.patchNamespacedCustomObject({ ...CR, name: 'survival', body: { metadata: { resourceVersion: created.metadata.resourceVersion, annotations: { [LOCK]: 'x' } } } }, merge),
    );
    assert.equal(s.code, 409);
    assert.equal(
      s.body.message,
      'Operation cannot be fulfilled on minecraftservers.felis.lolicon.best "survival": the object has been modified; please apply your changes to the latest version and try again',
    );
    assert.deepEqual(s.body.details, { name: 'survival', group: 'felis.lolicon.best', kind: 'minecraftservers' });
    // The same through JSON patch replace.
    const s2 = await statusOf(
      t.custom.patchNamespacedCustomObject({
        ...CR,
        name: 'survival',
        body: [{ op: 'replace', path: '/metadata/resourceVersion', value: created.metadata.resourceVersion }],
      }),
    );
    assert.equal(s2.code, 409);
  });

  it('the current resourceVersion in the patch succeeds', async () => {
    const ok = (await t.custom.patchNamespacedCustomObject(
      { ...CR, name: 'survival', body: { metadata: { resourceVersion: created.metadata.resourceVersion, annotations: { [LOCK]: 'x' } } } },
      merge,
    )) as Obj;
    assert.equal(ok.metadata.annotations![LOCK], 'x');
  });

  it('clearing resourceVersion is a 422 for a custom resource', async () => {
    for (const rv of ['', null]) {
      const s = await statusOf(t.custom.patchNamespacedCustomObject({ ...CR, name: 'survival', body: { metadata: { resourceVersion: rv } } }, merge));
      assert.equal(s.code, 422);
      assert.equal(s.body.message, 'minecraftservers.felis.lolicon.best "survival" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
      assert.deepEqual(s.body.details, {
        name: 'survival',
        group: 'felis.lolicon.best',
        kind: 'minecraftservers',
        causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update', field: 'metadata.resourceVersion' }],
      });
    }
  });

  it('JSON patch with ~1 and ~0; a failed remove or test is the generic 422', async () => {
    const added = (await t.custom.patchNamespacedCustomObject({
      ...CR,
      name: 'survival',
      body: [{ op: 'add', path: '/metadata/annotations/felis.lolicon.best~1maintenance', value: 'restore' }],
    })) as Obj;
    assert.equal(added.metadata.annotations![LOCK], 'restore');
    const removed = (await t.custom.patchNamespacedCustomObject({
      ...CR,
      name: 'survival',
      body: [{ op: 'remove', path: '/metadata/annotations/felis.lolicon.best~1maintenance' }],
    })) as Obj;
    assert.equal(removed.metadata.annotations![LOCK], undefined);
    const tilde = await statusOf(t.custom.patchNamespacedCustomObject({ ...CR, name: 'survival', body: [{ op: 'add', path: '/metadata/annotations/x~0y', value: '1' }] }));
    assert.equal(tilde.code, 422);
    assert.match(tilde.body.message, /metadata\.annotations: Invalid value: "x~y"/);
    for (const op of [
      { op: 'remove', path: '/metadata/annotations/missing' },
      { op: 'test', path: '/spec/version', value: '0.0' },
    ]) {
      const s = await statusOf(t.custom.patchNamespacedCustomObject({ ...CR, name: 'survival', body: [op] }));
      assert.equal(s.code, 422);
      assert.deepEqual(s.body, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'the server rejected our request due to an error in our request',
        reason: 'Invalid',
        details: {},
        code: 422,
      });
    }
  });

  it('strategic merge and plain application/json are 415', async () => {
    for (const ct of [PatchStrategy.StrategicMergePatch, 'application/json']) {
      const s = await statusOf(t.custom.patchNamespacedCustomObject({ ...CR, name: 'survival', body: { metadata: { labels: { a: 'b' } } } }, setHeaderOptions('Content-Type', ct)));
      assert.equal(s.code, 415);
      assert.deepEqual(s.body, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
        reason: 'UnsupportedMediaType',
        code: 415,
      });
    }
  });

  it('an array sent as merge patch is a 422', async () => {
    const res = await rawFetch(t.cluster, '/apis/felis.lolicon.best/v1alpha1/namespaces/minecraft/minecraftservers/survival', {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: '[]',
    });
    assert.equal(res.status, 422);
    const body = await res.json();
    assert.match(body.message, /^ "" is invalid: patch: Invalid value: "\[\]": couldn't get version\/kind; json parse error: json: cannot unmarshal array/);
  });

  it('status subresource: spec changes ignored there, status ignored on the main resource', async () => {
    const withStatus = (await t.custom.patchNamespacedCustomObjectStatus({ ...CR, name: 'survival', body: { status: { phase: 'Running', ready: true }, spec: { version: 'hacked' } } }, merge)) as Obj;
    assert.deepEqual(withStatus.status, { phase: 'Running', ready: true });
    assert.equal(withStatus.spec.version, '1.21');
    const got = (await t.custom.getNamespacedCustomObjectStatus({ ...CR, name: 'survival' })) as Obj;
    assert.equal(got.status.phase, 'Running');
    const main = (await t.custom.patchNamespacedCustomObject({ ...CR, name: 'survival', body: { status: { phase: 'Stopped' }, spec: { version: '1.22' } } }, merge)) as Obj;
    assert.equal(main.status.phase, 'Running');
    assert.equal(main.spec.version, '1.22');
    assert.equal(main.metadata.generation, 2);
    const put = (await t.custom.replaceNamespacedCustomObjectStatus({
      ...CR,
      name: 'survival',
      body: { ...main, status: { phase: 'Stopped', ready: false } },
    })) as Obj;
    assert.equal(put.status.phase, 'Stopped');
  });

  it('PATCH of a missing CR is a 404; create without kind is a 400; delete returns Success', async () => {
    const s = await statusOf(t.custom.patchNamespacedCustomObject({ ...CR, name: 'nope', body: { metadata: {} } }, merge));
    assert.equal(s.code, 404);
    assert.equal(s.body.message, 'minecraftservers.felis.lolicon.best "nope" not found');
    const s2 = await statusOf(t.custom.createNamespacedCustomObject({ ...CR, body: { metadata: { name: 'nokind' } } }));
    assert.equal(s2.code, 400);
    const del = (await t.custom.deleteNamespacedCustomObject({ ...CR, name: 'survival' })) as { status: string; details: { kind: string } };
    assert.equal(del.status, 'Success');
    assert.equal(del.details.kind, 'minecraftservers');
  });
});

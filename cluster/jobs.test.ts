import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PatchStrategy, setHeaderOptions, type V1Job } from '@kubernetes/client-node';
import { rawFetch, shJob, statusOf, type TestCluster, testCluster, waitFor } from './cluster.test-kit.ts';

const NAME_ALPHABET = /^[bcdfghjklmnpqrstvwxz2456789]{5}$/;

describe('batch/v1 Jobs: defaulting, validation, patch, delete', () => {
  let t: TestCluster;
  before(async () => {
    t = await testCluster();
  });
  after(() => t.close());

  it('create returns 201 with the defaulted object and generated labels', async () => {
    const res = await rawFetch(t.cluster, '/apis/batch/v1/namespaces/minecraft/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(shJob('defaults', 'sleep 5')),
    });
    assert.equal(res.status, 201);
    const job = (await res.json()) as V1Job & { metadata: Record<string, any> };
    const uid = job.metadata.uid!;
    assert.equal(job.kind, 'Job');
    assert.equal(job.apiVersion, 'batch/v1');
    assert.match(job.metadata.resourceVersion!, /^\d+$/);
    assert.match(job.metadata.creationTimestamp as unknown as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(job.metadata.generation, 1);
    assert.equal(job.spec!.parallelism, 1);
    assert.equal(job.spec!.completions, 1);
    assert.equal(job.spec!.backoffLimit, 0);
    assert.equal(job.spec!.completionMode, 'NonIndexed');
    assert.equal(job.spec!.suspend, false);
    assert.deepEqual(job.spec!.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
    assert.deepEqual(job.spec!.template.metadata!.labels, {
      'batch.kubernetes.io/controller-uid': uid,
      'batch.kubernetes.io/job-name': 'defaults',
      'controller-uid': uid,
      'job-name': 'defaults',
    });
    // No labels of its own: they default to the template's.
    assert.deepEqual(job.metadata.labels, job.spec!.template.metadata!.labels);
    const c = job.spec!.template.spec!.containers[0]!;
    assert.equal(c.terminationMessagePath, '/dev/termination-log');
    assert.equal(c.imagePullPolicy, 'IfNotPresent');
    assert.equal(job.spec!.template.spec!.dnsPolicy, 'ClusterFirst');
    assert.equal(job.spec!.template.spec!.terminationGracePeriodSeconds, 30);
    assert.deepEqual(job.status, {});
  });

  it('backoffLimit defaults to 6; a Job with labels keeps only its own', async () => {
    const body = shJob('labelled', 'true', { labels: { 'felis.lolicon.best/server': 'survival' } });
    delete body.spec!.backoffLimit;
    const job = await t.batch.createNamespacedJob({ namespace: 'minecraft', body });
    assert.equal(job.spec!.backoffLimit, 6);
    assert.deepEqual(job.metadata!.labels, { 'felis.lolicon.best/server': 'survival' });
    assert.equal(job.spec!.template.metadata!.labels!['felis.lolicon.best/server'], 'survival');
    assert.equal(job.spec!.template.metadata!.labels!['job-name'], 'labelled');
  });

  it('a 63-character name is accepted; 64 is 422 on spec.template.labels', async () => {
    const ok = await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('a'.repeat(63), 'true') });
    assert.equal(ok.metadata!.name, 'a'.repeat(63));
    const long = 'b'.repeat(64);
    const s = await statusOf(t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob(long, 'true') }));
    assert.equal(s.code, 422);
    assert.equal(s.body.reason, 'Invalid');
    assert.equal(s.body.message, `Job.batch "${long}" is invalid: spec.template.labels: Invalid value: "${long}": must be no more than 63 characters`);
    assert.equal(s.body.details.kind, 'Job');
    assert.equal(s.body.details.group, 'batch');
    assert.equal(s.body.details.name, long);
    assert.ok(s.body.details.causes.length >= 1);
    for (const c of s.body.details.causes) {
      assert.deepEqual(c, {
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${long}": must be no more than 63 characters`,
        field: 'spec.template.labels',
      });
    }
  });

  it('an upper-case name is a DNS-1123 subdomain error', async () => {
    const s = await statusOf(t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('MC_Backup', 'true') }));
    assert.equal(s.code, 422);
    assert.equal(
      s.body.message,
      `Job.batch "MC_Backup" is invalid: metadata.name: Invalid value: "MC_Backup": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    );
  });

  it('restartPolicy unset or Always is Required; another value NotSupported', async () => {
    const body = shJob('rp', 'true');
    delete body.spec!.template.spec!.restartPolicy;
    const s = await statusOf(t.batch.createNamespacedJob({ namespace: 'minecraft', body }));
    assert.equal(s.code, 422);
    assert.equal(s.body.message, 'Job.batch "rp" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"');
    assert.deepEqual(s.body.details.causes, [{ reason: 'FieldValueRequired', message: 'Required value: valid values: "OnFailure", "Never"', field: 'spec.template.spec.restartPolicy' }]);
  });

  it('containers: [] and a container without image', async () => {
    const body = shJob('noc', 'true');
    body.spec!.template.spec!.containers = [];
    const s = await statusOf(t.batch.createNamespacedJob({ namespace: 'minecraft', body }));
    assert.equal(s.body.message, 'Job.batch "noc" is invalid: spec.template.spec.containers: Required value');
    const body2 = shJob('noimg', 'true');
    delete (body2.spec!.template.spec!.containers[0] as { image?: string }).image;
    const s2 = await statusOf(t.batch.createNamespacedJob({ namespace: 'minecraft', body: body2 }));
    assert.equal(s2.body.message, 'Job.batch "noimg" is invalid: spec.template.spec.containers[0].image: Required value');
  });

  it('label value and key syntax, several causes wrapped in [...]', async () => {
    const body = shJob('lbl', 'true', { labels: { ok: 'has space', '-bad': 'x' } });
    const s = await statusOf(t.batch.createNamespacedJob({ namespace: 'minecraft', body }));
    assert.equal(s.code, 422);
    assert.ok(s.body.message.startsWith('Job.batch "lbl" is invalid: ['), s.body.message);
    assert.ok(
      s.body.message.includes(
        `metadata.labels: Invalid value: "has space": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', or 'my_value', or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
      ),
    );
    assert.ok(s.body.message.includes(`metadata.labels: Invalid value: "-bad": name part must consist of alphanumeric characters`));
    assert.ok(s.body.details.causes.some((c: { field: string }) => c.field === 'spec.template.labels'));
  });

  it('annotations over 256 KiB are Too long', async () => {
    const body = shJob('ann', 'true');
    body.metadata!.annotations = { 'felis.lolicon.best/big': 'x'.repeat(262144) };
    const s = await statusOf(t.batch.createNamespacedJob({ namespace: 'minecraft', body }));
    assert.equal(s.code, 422);
    assert.equal(s.body.message, 'Job.batch "ann" is invalid: metadata.annotations: Too long: must have at most 262144 bytes');
    assert.equal(s.body.details.causes[0].reason, 'FieldValueTooLong');
  });

  it('negative numeric fields', async () => {
    const body = shJob('neg', 'true', { spec: { activeDeadlineSeconds: -1, ttlSecondsAfterFinished: -5 } });
    const s = await statusOf(t.batch.createNamespacedJob({ namespace: 'minecraft', body }));
    assert.equal(
      s.body.message,
      'Job.batch "neg" is invalid: [spec.activeDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0, spec.ttlSecondsAfterFinished: Invalid value: -5: must be greater than or equal to 0]',
    );
  });

  it('generateName appends 5 characters from the name alphabet', async () => {
    const body = shJob('', 'true');
    body.metadata = { generateName: 'mc-backup-' };
    const job = await t.batch.createNamespacedJob({ namespace: 'minecraft', body });
    assert.equal(job.metadata!.generateName, 'mc-backup-');
    assert.match(job.metadata!.name!.slice('mc-backup-'.length), NAME_ALPHABET);
    assert.equal(job.spec!.template.metadata!.labels!['job-name'], job.metadata!.name);
    const long = shJob('', 'true');
    long.metadata = { generateName: `${'g'.repeat(70)}-` };
    const j2 = await t.batch.createNamespacedJob({ namespace: 'minecraft', body: long });
    assert.equal(j2.metadata!.name!.length, 63);
    assert.ok(j2.metadata!.name!.startsWith('g'.repeat(58)));
  });

  it('dryRun=All validates and persists nothing', async () => {
    const job = await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('dry', 'true'), dryRun: 'All' });
    assert.equal(job.metadata!.name, 'dry');
    await statusOf(t.batch.readNamespacedJob({ namespace: 'minecraft', name: 'dry' }));
  });

  it('patch: merge, json-patch and strategic merge of metadata; resourceVersion precondition', async () => {
    const job = await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('patchme', 'sleep 5') });
    const merged = await t.batch.patchNamespacedJob(
      { namespace: 'minecraft', name: 'patchme', body: { metadata: { labels: { a: '1' }, annotations: { 'x/y': 'z' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.equal(merged.metadata!.labels!.a, '1');
    assert.ok(Number(merged.metadata!.resourceVersion) > Number(job.metadata!.resourceVersion));
    const jp = await t.batch.patchNamespacedJob({
      namespace: 'minecraft',
      name: 'patchme',
      body: [{ op: 'remove', path: '/metadata/annotations/x~1y' }],
    });
    assert.equal(jp.metadata!.annotations?.['x/y'], undefined);
    const smp = await t.batch.patchNamespacedJob(
      { namespace: 'minecraft', name: 'patchme', body: { metadata: { labels: { b: '2' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    assert.equal(smp.metadata!.labels!.b, '2');
    assert.equal(smp.metadata!.labels!.a, '1');
    // Stale resourceVersion: 409 with the optimistic-lock message.
    const s = await statusOf(
      t.batch.patchNamespacedJob(
        { namespace: 'minecraft', name: 'patchme', body: { metadata: { resourceVersion: job.metadata!.resourceVersion, labels: { c: '3' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    assert.equal(s.code, 409);
    assert.deepEqual(s.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Operation cannot be fulfilled on jobs.batch "patchme": the object has been modified; please apply your changes to the latest version and try again',
      reason: 'Conflict',
      details: { name: 'patchme', group: 'batch', kind: 'jobs' },
      code: 409,
    });
    // Clearing resourceVersion on a Job is an unconditional update.
    const uncond = await t.batch.patchNamespacedJob(
      { namespace: 'minecraft', name: 'patchme', body: { metadata: { resourceVersion: null, labels: { d: '4' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.equal(uncond.metadata!.labels!.d, '4');
  });

  it('an object sent as json-patch is a 400', async () => {
    const s = await statusOf(t.batch.patchNamespacedJob({ namespace: 'minecraft', name: 'patchme', body: { metadata: { labels: { x: 'y' } } } }));
    assert.equal(s.code, 400);
    assert.equal(s.body.message, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  });

  it('spec.template is immutable', async () => {
    const s = await statusOf(
      t.batch.patchNamespacedJob(
        {
          namespace: 'minecraft',
          name: 'patchme',
          body: { spec: { template: { spec: { containers: [{ name: 'files', image: 'busybox:2' }] } } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      ),
    );
    assert.equal(s.code, 422);
    assert.match(s.body.message, /^Job\.batch "patchme" is invalid: spec\.template: Invalid value: .*: field is immutable$/);
    assert.ok(s.body.details.causes.some((c: { field: string }) => c.field === 'spec.template'));
  });

  it('a status change through the main resource is ignored', async () => {
    const j = await t.batch.patchNamespacedJob({ namespace: 'minecraft', name: 'patchme', body: { status: { succeeded: 5 } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    assert.notEqual(j.status?.succeeded, 5);
  });

  it('delete orphans Pods by default (with a warning); Background deletes them', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('orph', 'sleep 30') });
    const pod = await waitFor(async () => (await t.core.listNamespacedPod({ namespace: 'minecraft', labelSelector: 'job-name=orph' })).items[0], 'orph pod');
    const res = await rawFetch(t.cluster, '/apis/batch/v1/namespaces/minecraft/jobs/orph', { method: 'DELETE' });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('warning') ?? '', /child pods are preserved by default/);
    const body = await res.json();
    assert.deepEqual(body.metadata.finalizers, ['orphan']);
    await waitFor(async () => (await t.batch.listNamespacedJob({ namespace: 'minecraft', fieldSelector: 'metadata.name=orph' })).items.length === 0 || undefined, 'orph job gone');
    const after = await t.core.readNamespacedPod({ namespace: 'minecraft', name: pod.metadata!.name! });
    assert.equal(after.metadata!.ownerReferences, undefined);

    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('bg', 'sleep 30') });
    const p2 = await waitFor(async () => (await t.core.listNamespacedPod({ namespace: 'minecraft', labelSelector: 'job-name=bg' })).items.find((p) => p.status?.phase === 'Running'), 'bg pod running');
    const st = await t.batch.deleteNamespacedJob({ namespace: 'minecraft', name: 'bg', propagationPolicy: 'Background' });
    assert.equal((st as { status?: string }).status, 'Success');
    await waitFor(async () => (await t.core.listNamespacedPod({ namespace: 'minecraft', fieldSelector: `metadata.name=${p2.metadata!.name}` })).items.length === 0 || undefined, 'bg pod deleted');
    // The orphan is still running; clean it up.
    await t.core.deleteNamespacedPod({ namespace: 'minecraft', name: pod.metadata!.name!, gracePeriodSeconds: 0 });
  });
});

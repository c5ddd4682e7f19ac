import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isOurChange, jobKind } from '../maintenance/holder.ts';
import { JobSpecError } from './render.ts';
import { LABEL_FILES_RECEIVE, LABEL_UPLOAD_SESSION, RECEIVE_PORT, renderReceiverJob } from './upload-job.ts';

const BASE = {
  namespace: 'minecraft',
  server: 'survival',
  opId: 'u0123456789abcde',
  worldPvc: 'world-survival-0',
  image: 'felis-world/files:dev',
  command: ['/usr/local/bin/felis', 'files'],
  serviceAccount: 'felis-restore',
  worldsRoot: '/data',
  ttlSeconds: 120,
  tokenSha256: 'a'.repeat(64),
  once: true,
  idleSeconds: 10,
  lifetimeSeconds: 540,
};

test('a receiver Job mounts the world read-write, holds it as a write, and carries only the token digest', () => {
  const job = renderReceiverJob(BASE);
  const labels = job.metadata!.labels!;
  assert.equal(labels['felis.lolicon.best/files-mode'], 'upload');
  assert.equal(labels[LABEL_FILES_RECEIVE], 'true');
  assert.equal(jobKind(job), 'file-write', 'it holds the world while it runs');
  const pod = job.spec!.template.spec!;
  assert.equal(pod.volumes![0]!.persistentVolumeClaim!.readOnly, false);
  const c = pod.containers[0]!;
  assert.deepEqual(c.args, ['--receive', '--worlds-root', '/data']);
  assert.deepEqual(c.ports, [{ name: 'receive', containerPort: RECEIVE_PORT, protocol: 'TCP' }]);
  assert.deepEqual(c.securityContext!.capabilities!.add, ['CHOWN', 'DAC_OVERRIDE']);
  const env = Object.fromEntries(c.env!.map((e) => [e.name, e.value ?? e.valueFrom?.fieldRef?.fieldPath]));
  assert.deepEqual(env, {
    FELIS_POD_IP: 'status.podIP',
    FELIS_SERVE_PORT: String(RECEIVE_PORT),
    FELIS_SERVE_TOKEN_SHA256: 'a'.repeat(64),
    FELIS_SERVE_IDLE_SECONDS: '10',
    FELIS_SERVE_LIFETIME_SECONDS: '540',
    FELIS_RECEIVE_ONCE: 'true',
  });
  assert.equal(job.spec!.activeDeadlineSeconds, 600);
  assert.equal(pod.automountServiceAccountToken, false);
  // The single PUT's Job is a sync file Job: no background label; only the mark of a change of ours.
  assert.equal(labels['felis.lolicon.best/files-async'], undefined);
  assert.deepEqual(job.metadata!.annotations, { 'felis.lolicon.best/files-change': 'felis-world' });
});

test('a session receiver is a background op (async on the Job and its Pods, its path annotated) that holds nothing: mode read, no mark of a change of ours', () => {
  const job = renderReceiverJob({ ...BASE, once: false, session: 'c'.repeat(32), path: 'plugins/pack.zip' });
  assert.equal(job.metadata!.labels!['felis.lolicon.best/files-async'], 'true');
  assert.equal(job.spec!.template.metadata!.labels!['felis.lolicon.best/files-async'], 'true');
  assert.deepEqual(job.metadata!.annotations, { 'felis.lolicon.best/files-path': 'plugins/pack.zip' });
  // The one shape both holder rules count as no holder, as an edit session is; its own label says what it is.
  assert.equal(job.metadata!.labels!['felis.lolicon.best/files-mode'], 'read');
  assert.equal(job.spec!.template.metadata!.labels!['felis.lolicon.best/files-mode'], 'read');
  assert.equal(jobKind(job), undefined, 'an idle session holds nothing');
  assert.equal(isOurChange(job), false, 'no change of the line waits for it');
  assert.equal(job.metadata!.labels![LABEL_UPLOAD_SESSION], 'c'.repeat(32));
  // Still read-write, with the writers' capabilities: it places the file inside a locked call.
  const pod = job.spec!.template.spec!;
  assert.equal(pod.volumes![0]!.persistentVolumeClaim!.readOnly, false);
  assert.deepEqual(pod.containers[0]!.securityContext!.capabilities!.add, ['CHOWN', 'DAC_OVERRIDE']);
});

test('a session receiver is labelled with its session; bad inputs are refused before any API call', () => {
  const id = 'c'.repeat(32);
  const job = renderReceiverJob({ ...BASE, once: false, session: id });
  assert.equal(job.metadata!.labels![LABEL_UPLOAD_SESSION], id);
  assert.ok(job.spec!.template.spec!.containers[0]!.env!.some((e) => e.name === 'FELIS_UPLOAD_SESSION' && e.value === id));
  assert.ok(!job.spec!.template.spec!.containers[0]!.env!.some((e) => e.name === 'FELIS_RECEIVE_ONCE'));
  assert.throws(() => renderReceiverJob({ ...BASE, once: false, session: 'nothex' }), JobSpecError);
  assert.throws(() => renderReceiverJob({ ...BASE, session: id }), JobSpecError, 'once and a session exclude each other');
  assert.throws(() => renderReceiverJob({ ...BASE, tokenSha256: 'x' }), JobSpecError);
  assert.throws(() => renderReceiverJob({ ...BASE, image: '' }), JobSpecError);
});

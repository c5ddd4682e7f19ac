import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileOpOf } from '../labels.ts';
import { holdState, isOurChange, jobKind } from '../maintenance/holder.ts';
import { ASYNC, jobParams } from './params.test-kit.ts';
import { JobSpecError, LABEL_FILES_PULL, PULL_NODE_OPTIONS, renderFilesJob } from './render.ts';

const pull = jobParams({ op: 'pull', path: 'plugins', url: 'https://example.com/a.jar?token=secret', ...ASYNC });

test('pull: a background RW Job with its own label, --url and --to, CHOWN, its heap limit, its op id and how long its staging is kept', () => {
  const job = renderFilesJob({ ...pull, to: 'a.jar' });
  const c = job.spec!.template.spec!.containers[0];
  assert.deepEqual(c.args, ['--op', 'pull', '--path', 'plugins', '--worlds-root', '/data', '--url', 'https://example.com/a.jar?token=secret', '--to', 'a.jar']);
  assert.equal(job.metadata!.labels![LABEL_FILES_PULL], 'true');
  assert.equal(job.spec!.template.metadata!.labels![LABEL_FILES_PULL], 'true');
  assert.deepEqual(c.securityContext!.capabilities!.add, ['CHOWN', 'DAC_OVERRIDE']);
  assert.equal(c.volumeMounts![0].readOnly, false);
  assert.deepEqual(c.env, [
    { name: 'NODE_OPTIONS', value: PULL_NODE_OPTIONS },
    // The Job's deadline and TTL of the test kit's background settings.
    { name: 'FELIS_PULL_KEEP_SECONDS', value: String(pull.deadlineSeconds + pull.ttlSeconds) },
    { name: 'FELIS_OP_ID', valueFrom: { fieldRef: { fieldPath: "metadata.labels['felis.lolicon.best/files-op']" } } },
  ]);
  assert.equal(c.ports, undefined, 'no cancel port without a token');
  assert.deepEqual(renderFilesJob(pull).spec!.template.spec!.containers[0].args!.slice(-2), ['--url', 'https://example.com/a.jar?token=secret']);
});

test('pull: it holds no world, for Felis (mode read) or for our line (no change mark); its op is still named pull', () => {
  const job = renderFilesJob({ ...pull, to: 'a.jar' });
  assert.equal(job.metadata!.labels!['felis.lolicon.best/files-mode'], 'read');
  assert.equal(job.spec!.template.metadata!.labels!['felis.lolicon.best/files-mode'], 'read');
  assert.deepEqual(job.metadata!.annotations, { 'felis.lolicon.best/files-path': 'plugins' });
  assert.equal(jobKind(job), undefined);
  assert.equal(isOurChange(job), false);
  assert.deepEqual(holdState('survival', undefined, [job], new Date()), {});
  assert.equal(fileOpOf(job.metadata!.labels), 'pull');
});

test('pull-place: a sync change holding the world, with --to and --pull-op; a name and a pull op id are required', () => {
  const job = renderFilesJob(jobParams({ op: 'pull-place', path: 'plugins', to: 'a.jar', pullOp: '0123456789abcdef' }));
  const c = job.spec!.template.spec!.containers[0];
  assert.deepEqual(c.args, ['--op', 'pull-place', '--path', 'plugins', '--worlds-root', '/data', '--to', 'a.jar', '--pull-op', '0123456789abcdef']);
  assert.equal(jobKind(job), 'file-write');
  assert.equal(isOurChange(job), true);
  assert.deepEqual(c.securityContext!.capabilities!.add, ['DAC_OVERRIDE']);
  assert.throws(() => renderFilesJob(jobParams({ op: 'pull-place', path: 'plugins', to: 'a.jar' })), JobSpecError);
  assert.throws(() => renderFilesJob(jobParams({ op: 'pull-place', path: 'plugins', pullOp: '0123456789abcdef' })), JobSpecError);
});

test('pull: the operator env (only FELIS_PULL_*), the cancel listener and its port', () => {
  const job = renderFilesJob({ ...pull, pullEnv: { FELIS_PULL_ALLOW: '127.0.0.1', FELIS_PULL_MAX_BYTES: '10', HOME: '/x' }, cancelTokenSha256: 'a'.repeat(64) });
  const c = job.spec!.template.spec!.containers[0];
  const env = Object.fromEntries(c.env!.map((e) => [e.name, e.value ?? e.valueFrom?.fieldRef?.fieldPath]));
  assert.deepEqual(env, {
    NODE_OPTIONS: PULL_NODE_OPTIONS,
    FELIS_PULL_ALLOW: '127.0.0.1',
    FELIS_PULL_MAX_BYTES: '10',
    FELIS_POD_IP: 'status.podIP',
    FELIS_SERVE_PORT: '8420',
    FELIS_SERVE_TOKEN_SHA256: 'a'.repeat(64),
    FELIS_PULL_KEEP_SECONDS: String(pull.deadlineSeconds + pull.ttlSeconds),
    FELIS_OP_ID: "metadata.labels['felis.lolicon.best/files-op']",
  });
  assert.deepEqual(c.ports, [{ name: 'cancel', containerPort: 8420, protocol: 'TCP' }]);
});

test('pull: a URL is required; a cancel digest is only for a pull, and only a digest; other ops carry no pull env', () => {
  assert.throws(() => renderFilesJob({ ...pull, url: undefined }), JobSpecError);
  assert.throws(() => renderFilesJob({ ...pull, cancelTokenSha256: 'nope' }), JobSpecError);
  assert.throws(() => renderFilesJob({ ...pull, op: 'unzip', path: 'a.zip', cancelTokenSha256: 'a'.repeat(64) }), JobSpecError);
  const unzip = renderFilesJob({ ...pull, op: 'unzip', path: 'a.zip', url: undefined, pullEnv: { FELIS_PULL_ALLOW: '10.0.0.0/8' } });
  assert.equal(JSON.stringify(unzip).includes('FELIS_PULL'), false);
  assert.equal(unzip.metadata!.labels![LABEL_FILES_PULL], undefined);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileOpOf, LABEL_FILES_FOLLOW } from '../labels.ts';
import { holdState } from '../maintenance/holder.ts';
import { jobParams } from './params.test-kit.ts';
import { BROWSE_PORT, JobSpecError, renderFilesJob } from './render.ts';

const follow = jobParams({ op: 'tail', path: 'logs/latest.log', follow: true, lines: 5, deadlineSeconds: 720, followTokenSha256: 'a'.repeat(64) });

test("a follow Job: tail's command line with --follow, the serving env with the token's digest alone, its port, its own label, its deadline; a read that holds nothing", () => {
  const job = renderFilesJob(follow);
  const c = job.spec!.template.spec!.containers[0]!;
  assert.deepEqual(c.args, ['--op', 'tail', '--path', 'logs/latest.log', '--worlds-root', '/data', '--lines', '5', '--follow']);
  const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom?.fieldRef?.fieldPath]));
  assert.deepEqual(env, { FELIS_POD_IP: 'status.podIP', FELIS_SERVE_PORT: String(BROWSE_PORT), FELIS_SERVE_TOKEN_SHA256: 'a'.repeat(64) });
  assert.deepEqual(c.ports, [{ name: 'follow', containerPort: BROWSE_PORT, protocol: 'TCP' }]);
  const labels = job.spec!.template.metadata!.labels!;
  assert.equal(labels[LABEL_FILES_FOLLOW], 'true');
  assert.equal(job.metadata!.labels![LABEL_FILES_FOLLOW], 'true');
  assert.equal(fileOpOf(job.metadata!.labels), 'tail');
  assert.equal(job.spec!.activeDeadlineSeconds, 720);
  assert.equal(c.securityContext?.readOnlyRootFilesystem ?? true, true);
  assert.equal(holdState('survival', {}, [job], new Date()).holder, undefined, 'a follow holds no world');
  // A resume carries its id instead of lines.
  const resumed = renderFilesJob({ ...follow, lines: undefined, from: '12:34' });
  assert.deepEqual(resumed.spec!.template.spec!.containers[0]!.args!.slice(-3), ['--follow', '--from', '12:34']);
});

test('only a tail with follow takes a follow token, and only a digest; a plain tail has no serving env, port or label', () => {
  assert.throws(() => renderFilesJob({ ...follow, followTokenSha256: 'nope' }), JobSpecError);
  assert.throws(() => renderFilesJob({ ...follow, follow: undefined }), JobSpecError);
  assert.throws(() => renderFilesJob({ ...follow, op: 'read', path: 'a' }), JobSpecError);
  const plain = renderFilesJob(jobParams({ op: 'tail', path: 'logs/latest.log' }));
  const c = plain.spec!.template.spec!.containers[0]!;
  assert.equal(c.env, undefined);
  assert.equal(c.ports, undefined);
  assert.equal(plain.metadata!.labels![LABEL_FILES_FOLLOW], undefined);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jobParams } from './params.test-kit.ts';
import { BatchTooLargeError, JobSpecError, renderFilesJob } from './render.ts';

const base = jobParams({ op: 'delete-many', path: 'logs' });

test('a many-file Job: Felis-shaped command line, its items in the env, a read-write world', () => {
  const paths = Array.from({ length: 1000 }, (_, i) => `logs/${i}.log.gz`);
  const job = renderFilesJob({ ...base, batch: { paths } });
  const c = job.spec!.template.spec!.containers[0]!;
  assert.deepEqual(c.args, ['--op', 'delete-many', '--path', 'logs', '--worlds-root', '/data']);
  assert.deepEqual(c.env!.map((e) => e.name).slice(0, 2), ['FELIS_BATCH_PARTS', 'FELIS_BATCH_0']);
  assert.equal(job.metadata!.labels!['felis.lolicon.best/files-mode'], 'delete-many');
  assert.equal(job.spec!.template.spec!.volumes![0]!.persistentVolumeClaim!.readOnly, false);
  assert.deepEqual(c.securityContext!.capabilities!.add, ['DAC_OVERRIDE']);
  // Far under the 1.5 MiB an etcd object may be, for the Job and again for its Pod.
  assert.ok(JSON.stringify(job).length < 64 << 10);
  const chmod = renderFilesJob({ ...base, op: 'chmod-many', path: '.', batch: { files: [{ path: 'a', mode: '755' }] } });
  assert.deepEqual(chmod.spec!.template.spec!.containers[0]!.securityContext!.capabilities!.add, ['DAC_OVERRIDE', 'FOWNER']);
});

test('a many-file op needs its items, and no other op takes any; one that does not fit is too_large', () => {
  assert.throws(() => renderFilesJob(base), JobSpecError);
  assert.throws(() => renderFilesJob({ ...base, op: 'delete', batch: { paths: ['a'] } }), JobSpecError);
  const chars = Array.from({ length: 90 }, (_, i) => String.fromCharCode(36 + i));
  const seg = () => Array.from(crypto.getRandomValues(new Uint8Array(250)), (b) => chars[b % chars.length]).join('');
  assert.throws(() => renderFilesJob({ ...base, batch: { paths: Array.from({ length: 1000 }, () => [seg(), seg(), seg(), seg()].join('/')) } }), BatchTooLargeError);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseFlags } from '../../job/program/flags.ts';
import { decodeBatchEnv } from '../protocol/batch-env.ts';
import { ASYNC, jobParams } from './params.test-kit.ts';
import { ARCHIVE_NODE_OPTIONS, BatchTooLargeError, JobSpecError, renderFilesJob } from './render.ts';

const base = jobParams({ op: 'compress', path: 'plugins', ...ASYNC });

test('a compress Job: the folder as --path, --format and --to, the selection in FELIS_BATCH_*, heap limits, a read-write world that may chown', () => {
  const paths = Array.from({ length: 1000 }, (_, i) => `plugins/p${i}.jar`);
  const job = renderFilesJob({ ...base, batch: { paths }, format: 'tar.xz', to: 'p.tar.xz' });
  const c = job.spec!.template.spec!.containers[0]!;
  assert.deepEqual(c.args, ['--op', 'compress', '--path', 'plugins', '--worlds-root', '/data', '--format', 'tar.xz', '--to', 'p.tar.xz']);
  const env = Object.fromEntries(c.env!.map((e) => [e.name, e.value]));
  assert.equal(env.NODE_OPTIONS, ARCHIVE_NODE_OPTIONS);
  assert.deepEqual(decodeBatchEnv('compress', env), { paths });
  assert.equal(job.metadata!.labels!['felis.lolicon.best/files-mode'], 'compress');
  assert.equal(job.metadata!.labels!['felis.lolicon.best/files-async'], 'true');
  assert.deepEqual(job.metadata!.annotations, { 'felis.lolicon.best/files-path': 'plugins', 'felis.lolicon.best/files-change': 'felis-world' });
  assert.equal(job.spec!.template.spec!.volumes![0]!.persistentVolumeClaim!.readOnly, false);
  assert.deepEqual(c.securityContext!.capabilities!.add, ['CHOWN', 'DAC_OVERRIDE']);
  // What the Job program reads back from that command line.
  const f = parseFlags(c.args!).flags;
  assert.deepEqual([f.op, f.path, f.format, f.to], ['compress', 'plugins', 'tar.xz', 'p.tar.xz']);
});

test('a compress needs its items, and items that do not fit one Job are too_large before any API call', () => {
  assert.throws(
    () => renderFilesJob({ ...base, format: 'zip' }),
    (e: Error) => e instanceof JobSpecError && /needs its items/.test(e.message),
  );
  // Random names do not compress: past the env's 1 MiB of base64.
  const chars = Array.from({ length: 90 }, (_, i) => String.fromCharCode(36 + i));
  const seg = () => Array.from(crypto.getRandomValues(new Uint8Array(250)), (b) => chars[b % chars.length]).join('');
  const paths = Array.from({ length: 1000 }, () => `plugins/${seg()}${seg()}${seg()}${seg()}`);
  assert.throws(() => renderFilesJob({ ...base, batch: { paths }, format: 'zip' }), BatchTooLargeError);
  // The other ops still take no items.
  assert.throws(() => renderFilesJob({ ...base, op: 'zip', path: 'world', batch: { paths: ['a'] } }), /takes no items/);
});

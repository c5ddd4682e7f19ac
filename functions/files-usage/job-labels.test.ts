import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchEarlier } from '../../lib/events/redelivery.ts';
import { jobParams } from '../../lib/job-spec/params.test-kit.ts';
import { renderFilesJob } from '../../lib/job-spec/render.ts';
import { fileOpOf } from '../../lib/labels.ts';
import { holdState, jobKind } from '../../lib/maintenance/holder.ts';

test('a usage Job holds nothing for Felis or for us (mode read, read-only), and its op is still named usage', () => {
  const job = renderFilesJob(jobParams({ op: 'usage', path: 'world', depth: 2 }));
  const labels = job.metadata!.labels!;
  assert.equal(labels['felis.lolicon.best/files-mode'], 'read', "Felis's rule passes by list and read only");
  assert.equal(labels['felis.lolicon.best/files-read-op'], 'usage');
  assert.equal(jobKind(job), undefined);
  assert.deepEqual(holdState('survival', undefined, [job], new Date()), {});
  assert.equal(job.spec!.template.spec!.containers[0]!.volumeMounts![0]!.readOnly, true);
  assert.deepEqual(job.spec!.template.spec!.containers[0]!.args, ['--op', 'usage', '--path', 'world', '--worlds-root', '/data', '--depth', '2']);
  // The ops listing and a redelivered event see the op by its name, not as a read.
  assert.equal(fileOpOf(labels), 'usage');
  const ev = { key: 'k', request: 'r' };
  assert.doesNotThrow(() => matchEarlier({ ...job, metadata: { ...job.metadata, labels: { ...labels, 'felis.lolicon.best/event-request': 'r' } } }, ev, { server: 'survival', op: 'usage' }));
  assert.throws(() => matchEarlier(job, ev, { server: 'survival', op: 'read' }), /event/);
  // A read's own Job carries no read-op label.
  assert.equal(renderFilesJob(jobParams({ op: 'read', path: 'eula.txt' })).metadata!.labels!['felis.lolicon.best/files-read-op'], undefined);
});

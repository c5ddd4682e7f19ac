import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EXPORT_SCRATCH_PATH, type ExportJobParams, renderExportJob } from './export-job.ts';
import { ARCHIVE_NODE_OPTIONS } from './render.ts';

const base: ExportJobParams = {
  namespace: 'mc',
  server: 'survival',
  exportId: '0123456789abcdef',
  worldPvc: 'world-survival-0',
  image: 'felis:1',
  command: ['/usr/local/bin/felis', 'export'],
  serviceAccount: 'felis-files',
  worldsRoot: '/data',
  ttlSeconds: 600,
  path: 'world',
  dir: true,
  tokenSha256: 'a'.repeat(64),
  idleSeconds: 60,
};

test('a folder download packs with a scratch folder of its own for the central directory, and a held-down heap', () => {
  const spec = renderExportJob(base).spec!.template.spec!;
  const c = spec.containers[0]!;
  const scratch = spec.volumes!.find((v) => v.emptyDir);
  assert.ok(scratch, 'an emptyDir volume');
  assert.ok(scratch.emptyDir!.sizeLimit, 'the scratch folder is bounded');
  const mount = c.volumeMounts!.find((m) => m.name === scratch.name);
  assert.equal(mount?.mountPath, EXPORT_SCRATCH_PATH);
  assert.notEqual(mount?.readOnly, true);
  const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
  assert.equal(env.FELIS_SCRATCH_DIR, EXPORT_SCRATCH_PATH);
  assert.equal(env.NODE_OPTIONS, ARCHIVE_NODE_OPTIONS);
  // The world stays read-only and the root file system too.
  assert.equal(c.volumeMounts!.find((m) => m.name === 'world')?.readOnly, true);
  assert.equal(c.securityContext?.readOnlyRootFilesystem, true);
});

test('a single-file download gets no scratch folder and no heap flags: it only copies bytes', () => {
  const spec = renderExportJob({ ...base, dir: false }).spec!.template.spec!;
  assert.deepEqual(
    spec.volumes!.map((v) => v.name),
    ['world'],
  );
  const names = (spec.containers[0]!.env ?? []).map((e) => e.name);
  assert.ok(!names.includes('FELIS_SCRATCH_DIR') && !names.includes('NODE_OPTIONS'), names.join(','));
});

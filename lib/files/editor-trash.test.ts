import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { asActor } from '../actor.ts';
import { callerTrash } from '../job-spec/trash.ts';
import { renderReceiverJob } from '../job-spec/upload-job.ts';
import { type BackgroundApi, BackgroundOps } from '../ops/background.ts';
import type { SyncRunner } from '../runner/sync-runner.ts';
import { editorConfig, TARGET as T } from './editor.test-kit.ts';
import { FilesEditor } from './editor.ts';
import { FileEditError } from './errors.ts';

const TRASH = { enabled: false, seconds: 3600, actor: '' };
const CFG = editorConfig({ trash: TRASH });

/** A runner that records each Job it is given and answers the next scripted result line. */
function fakeRunner(results: object[]) {
  const jobs: V1Job[] = [];
  const runner = {
    async findJobs() {
      return [];
    },
    async run(job: V1Job) {
      jobs.push(job);
      return JSON.stringify(results.shift() ?? {});
    },
  } as unknown as SyncRunner;
  return { runner, jobs };
}

const container = (j: V1Job) => j.spec!.template.spec!.containers[0]!;
const envOf = (j: V1Job) => Object.fromEntries((container(j).env ?? []).map((e) => [e.name, e.value]));

test("every mutation Job the editor renders carries the function's trash settings and the caller as FELIS_ACTOR; a read carries none", async () => {
  const { runner, jobs } = fakeRunner([{ trash_id: '0190a1b2c3d4e5f6' }, {}, { entries: [], avail: 5, trash_bytes: 7 }]);
  const ed = new FilesEditor(CFG, runner);
  const del = await asActor({ name: 'system:serviceaccount:games:panel' }, () => ed.delete(T, 'plugins/old'));
  assert.deepEqual(del, { trashId: '0190a1b2c3d4e5f6' });
  assert.deepEqual([envOf(jobs[0]!).FELIS_TRASH, envOf(jobs[0]!).FELIS_TRASH_SECONDS, envOf(jobs[0]!).FELIS_ACTOR], ['off', '3600', 'system:serviceaccount:games:panel']);
  // No actor in scope: no FELIS_ACTOR (the record's actor is then empty), the settings still.
  await ed.mkdir(T, 'a');
  assert.equal(envOf(jobs[1]!).FELIS_TRASH, 'off');
  assert.equal('FELIS_ACTOR' in envOf(jobs[1]!), false);
  const l = await ed.list(T, '');
  assert.equal(l.trashBytes, 7);
  assert.equal('FELIS_TRASH' in envOf(jobs[2]!), false, 'a read is told nothing');
});

test('the trash ops: list pages with --limit/--after, read-only; restore and purge by --trash-id (or --all), read-write; their results decoded', async () => {
  const item = { id: '0190a1b2c3d4e5f6', op: 'delete', paths: ['a'], bytes: 1, entries: 1, at: 'x', expires_at: 'y', actor: 'bearer' };
  const { runner, jobs } = fakeRunner([
    { trash_items: [item], trash_next: item.id, trash_bytes: 1 },
    { restored: ['back/a'] },
    { purged: 1, bytes: 1 },
    { purged: 4, bytes: 10 },
    { code: 'exists', error: 'a exists', entry: 'a' },
  ]);
  const ed = new FilesEditor(CFG, runner);
  assert.deepEqual(await ed.trashList(T, { limit: 10, after: '0190a1b2c3d4ffff' }), { items: [item], next: item.id, trashBytes: 1 });
  assert.deepEqual(container(jobs[0]!).args, ['--op', 'trash-list', '--path', '', '--worlds-root', '/data', '--limit', '10', '--after', '0190a1b2c3d4ffff']);
  assert.equal(jobs[0]!.spec!.template.spec!.volumes![0]!.persistentVolumeClaim!.readOnly, true);
  assert.deepEqual(await ed.trashRestore(T, item.id, 'back'), { restored: ['back/a'] });
  assert.deepEqual(container(jobs[1]!).args!.slice(6), ['--trash-id', item.id, '--to', 'back']);
  assert.equal(jobs[1]!.spec!.template.spec!.volumes![0]!.persistentVolumeClaim!.readOnly, false);
  assert.equal(envOf(jobs[1]!).FELIS_TRASH, 'off');
  assert.deepEqual(await ed.trashPurge(T, item.id), { purged: 1, bytes: 1 });
  assert.deepEqual(container(jobs[2]!).args!.slice(6), ['--trash-id', item.id]);
  assert.deepEqual(await ed.trashPurge(T, undefined), { purged: 4, bytes: 10 });
  assert.deepEqual(container(jobs[3]!).args!.slice(6), ['--all']);
  await assert.rejects(ed.trashRestore(T, item.id, undefined), (e: Error) => e instanceof FileEditError && e.code === 'file_exists' && e.details?.path === 'a');
  assert.deepEqual(container(jobs[4]!).args!.slice(6), ['--trash-id', item.id]);
});

test('a background op and an upload receiver carry the trash settings and the caller too', async () => {
  const created: V1Job[] = [];
  const api = { createJob: async (_ns: string, j: V1Job) => (created.push(j), j), listJobs: async () => [], listPods: async () => [] } as unknown as BackgroundApi;
  const ops = new BackgroundOps({ ...CFG, trash: { enabled: true, seconds: 86400, actor: '' } }, api, () => '0123456789abcdef');
  await asActor({ name: 'alice' }, () => ops.start(T, { op: 'unzip', path: 'a.zip', overwrite: true }));
  assert.deepEqual([envOf(created[0]!).FELIS_TRASH, envOf(created[0]!).FELIS_TRASH_SECONDS, envOf(created[0]!).FELIS_ACTOR], ['on', '86400', 'alice']);
  const receiver = renderReceiverJob({
    ...CFG,
    server: 'survival',
    opId: 'u123456789abcdef',
    worldPvc: 'world-survival-0',
    tokenSha256: 'a'.repeat(64),
    once: true,
    idleSeconds: 30,
    lifetimeSeconds: 600,
    trash: asActor({ name: 'bob' }, () => callerTrash(TRASH)),
  });
  assert.deepEqual([envOf(receiver).FELIS_TRASH, envOf(receiver).FELIS_ACTOR], ['off', 'bob']);
  assert.equal(callerTrash(undefined), undefined);
});

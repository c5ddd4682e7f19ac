import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { MaintenanceBusyError } from './errors.ts';
import { describeHolder, filesActivity, GRACE_MS, holder, holderLabel, holdState, jobFinished, jobKind, lockValue, parseLock } from './holder.ts';

const job = (labels: Record<string, string>, conditions: [string, string][] = [], name = 'j'): V1Job => ({
  metadata: { name, labels: { 'felis.lolicon.best/server': 'survival', ...labels }, creationTimestamp: new Date('2026-11-29T10:00:00Z') },
  status: { conditions: conditions.map(([type, status]) => ({ type, status })) },
});
const files = (mode?: string) => job({ 'app.kubernetes.io/managed-by': 'felis-files', ...(mode ? { 'felis.lolicon.best/files-mode': mode } : {}) });
const now = new Date('2026-11-29T12:00:00Z');
const lockAt = (ms: number, kind = 'restore') => ({ 'felis.lolicon.best/maintenance': lockValue(kind, new Date(now.getTime() - ms)) });

test("a Job's holder kind follows its managed-by label; reads and lists and backup exports hold nothing; an unknown files mode holds", () => {
  assert.equal(jobKind(job({ 'app.kubernetes.io/managed-by': 'felis-restore' })), 'restore');
  assert.equal(jobKind(job({ 'app.kubernetes.io/managed-by': 'felis-backup' })), 'backup');
  for (const m of ['write', 'mkdir', 'delete', 'rename', 'upload', 'unzip']) assert.equal(jobKind(files(m)), 'file-write', m);
  assert.equal(jobKind(files('read')), undefined);
  assert.equal(jobKind(files('list')), undefined);
  assert.equal(jobKind(files('trash-list')), undefined);
  assert.equal(jobKind(files('trash-restore')), 'file-write');
  assert.equal(jobKind(files('trash-purge')), 'file-write');
  assert.equal(jobKind(files()), 'file-write');
  assert.equal(jobKind(files('chmod')), 'file-write');
  assert.equal(jobKind(job({ 'app.kubernetes.io/managed-by': 'felis-export', 'felis.lolicon.best/export-mode': 'world' })), 'export');
  assert.equal(jobKind(job({ 'app.kubernetes.io/managed-by': 'felis-export', 'felis.lolicon.best/export-mode': 'files' })), 'export');
  assert.equal(jobKind(job({ 'app.kubernetes.io/managed-by': 'felis-export', 'felis.lolicon.best/export-mode': 'backup' })), undefined);
  assert.equal(jobKind(job({ 'app.kubernetes.io/managed-by': 'felis-export' })), 'export');
  assert.equal(jobKind(job({ 'app.kubernetes.io/managed-by': 'buildkit' })), undefined);
});

test('a running restore holds; each terminal condition ends it; False conditions do not', () => {
  const restore = (c: [string, string][] = []) => job({ 'app.kubernetes.io/managed-by': 'felis-restore' }, c);
  assert.equal(holder('survival', {}, [restore()], now), 'restore');
  for (const t of ['Complete', 'Failed', 'SuccessCriteriaMet', 'FailureTarget']) {
    assert.equal(holder('survival', {}, [restore([[t, 'True']])], now), undefined, t);
    assert.equal(jobFinished(restore([[t, 'True']])), true);
  }
  assert.equal(holder('survival', {}, [restore([['Failed', 'False']])], now), 'restore');
  const other = job({ 'app.kubernetes.io/managed-by': 'felis-restore', 'felis.lolicon.best/server': 'creative' });
  assert.equal(holder('survival', {}, [other], now), undefined);
  assert.equal(holder('survival', {}, [files('read')], now), undefined);
  assert.equal(holder('survival', {}, [files('read'), files('write')], now), 'file-write');
});

test('a pending restore chain and an archive-pending backup hold even when finished; a settled chain does not', () => {
  const chain = (state: string, c: [string, string][] = []) => job({ 'app.kubernetes.io/managed-by': 'felis-backup', 'felis.lolicon.best/then-restore': state }, c);
  assert.equal(holder('survival', {}, [chain('pending')], now), 'restore');
  assert.equal(holder('survival', {}, [chain('pending', [['Complete', 'True']])], now), 'restore');
  assert.equal(holder('survival', {}, [chain('pending', [['Failed', 'True']])], now), 'restore');
  assert.equal(holder('survival', {}, [chain('started', [['Complete', 'True']])], now), undefined);
  assert.equal(holder('survival', {}, [chain('abandoned', [['Complete', 'True']])], now), undefined);
  assert.equal(holder('survival', {}, [chain('abandoned')], now), 'backup');
  assert.equal(holder('survival', {}, [job({ 'app.kubernetes.io/managed-by': 'felis-backup' }, [['Complete', 'True']])], now), undefined);
  const archived = job({ 'app.kubernetes.io/managed-by': 'felis-backup', 'felis.lolicon.best/archive-pending': 'true' }, [['Complete', 'True']]);
  assert.equal(holder('survival', {}, [archived], now), 'backup');
});

test('a lock holds for less than Grace either way, a migration lock forever, an undatable one never', () => {
  assert.equal(holder('survival', lockAt(10_000), [], now), 'restore');
  assert.equal(holder('survival', lockAt(GRACE_MS - 1000), [], now), 'restore');
  assert.equal(holder('survival', lockAt(GRACE_MS), [], now), undefined);
  assert.equal(holder('survival', lockAt(-3600_000), [], now), undefined);
  assert.equal(holder('survival', lockAt(-(GRACE_MS - 1000)), [], now), 'restore');
  assert.equal(holder('survival', lockAt(10_000, 'file-write'), [], now), 'file-write');
  assert.equal(holder('survival', lockAt(86_400_000, 'migration'), [], now), 'migration');
  for (const v of ['yes', '@2026-11-29T12:00:00Z', 'restore@yesterday', '']) {
    assert.equal(holder('survival', { 'felis.lolicon.best/maintenance': v }, [], now), undefined, v);
  }
  assert.deepEqual(holdState('survival', { 'felis.lolicon.best/maintenance': 'yes' }, [], now), { staleLock: 'yes' });
});

test('a Job holder wins over a lock and reports itself', () => {
  const s = holdState('survival', lockAt(1000), [job({ 'app.kubernetes.io/managed-by': 'felis-backup' }, [], 'mc-backup-1')], now);
  assert.deepEqual(s, { holder: { kind: 'backup', source: 'job', job: 'mc-backup-1', since: '2026-11-29T10:00:00Z' } });
  const l = holdState('survival', lockAt(1000, 'file-write'), [], now);
  assert.deepEqual(l, { holder: { kind: 'file-write', source: 'lock', since: '2026-11-29T11:59:59Z' } });
});

test('lock values are RFC 3339 UTC seconds and parse back', () => {
  assert.equal(lockValue('file-write', new Date('2026-09-28T10:00:00.789Z')), 'file-write@2026-09-28T10:00:00Z');
  assert.deepEqual(parseLock('file-write@2026-09-28T12:00:00+02:00'), { kind: 'file-write', at: new Date('2026-09-28T10:00:00Z') });
  assert.equal(holderLabel('export'), 'a world export or file download');
  assert.equal(holderLabel('weird'), 'another operation');
});

const asyncFiles = (mode: string, path: string | undefined, managedBy = 'felis-files'): V1Job => {
  const j = job({ 'app.kubernetes.io/managed-by': managedBy, 'felis.lolicon.best/files-mode': mode, 'felis.lolicon.best/files-async': 'true' });
  if (path !== undefined) j.metadata!.annotations = { 'felis.lolicon.best/files-path': path };
  return j;
};

test('a file Job holder carries what it does; its kind stays file-write and other holders carry nothing', () => {
  const h = holdState('survival', {}, [asyncFiles('unzip', 'plugins/pack.zip')], now).holder!;
  assert.equal(h.kind, 'file-write');
  assert.deepEqual(h.activity, { op: 'unzip', path: 'plugins/pack.zip' });
  assert.deepEqual(holdState('survival', {}, [files('write')], now).holder!.activity, { op: 'write' });
  // An unknown mode still holds as a write, but names no op it cannot vouch for.
  assert.equal(holdState('survival', {}, [files('chmod')], now).holder!.activity, undefined);
  assert.equal(holdState('survival', {}, [files()], now).holder!.activity, undefined);
  assert.equal(holdState('survival', {}, [job({ 'app.kubernetes.io/managed-by': 'felis-restore' })], now).holder!.activity, undefined);
  assert.equal(filesActivity(asyncFiles('unzip', 'a.zip', 'felis-export')), undefined);
  // Prototype names are not ops.
  assert.equal(filesActivity(asyncFiles('constructor', 'a.zip')), undefined);
  assert.equal(holdState('survival', {}, [asyncFiles('toString', undefined)], now).holder!.kind, 'file-write');
});

test('a refusal names the file op and its path, and the kind-only wording is unchanged', () => {
  assert.equal(describeHolder('file-write', { op: 'unzip', path: 'plugins/pack.zip' }), 'an archive extraction (unzip of plugins/pack.zip)');
  assert.equal(describeHolder('file-write', { op: 'zip', path: 'world' }), 'an archive packing (zip of world)');
  assert.equal(describeHolder('file-write', { op: 'copy', path: 'plugins' }), 'a copy (copy of plugins)');
  assert.equal(describeHolder('file-write', { op: 'upload', path: 'mods/big.jar' }), 'a file upload (upload of mods/big.jar)');
  assert.equal(describeHolder('file-write', { op: 'write' }), 'a file write');
  assert.equal(describeHolder('file-write', { op: 'delete' }), 'a deletion');
  assert.equal(describeHolder('file-write', { op: 'delete-many' }), 'a deletion of many files');
  assert.deepEqual(filesActivity(asyncFiles('move-many', undefined)), { op: 'move-many' });
  assert.equal(describeHolder('file-write'), holderLabel('file-write'));
  assert.equal(describeHolder('backup', { op: 'unzip', path: 'x.zip' }), 'a backup');
  const err = new MaintenanceBusyError('file-write', { op: 'unzip', path: 'plugins/pack.zip' });
  assert.equal(err.kind, 'file-write');
  assert.equal(err.message, "an archive extraction (unzip of plugins/pack.zip) is running on this server's world; retry once it finishes");
  assert.equal(new MaintenanceBusyError('file-write').message, "a file write is running on this server's world; retry once it finishes");
});

test('a hostile path annotation is named printable and bounded', () => {
  const a = filesActivity(asyncFiles('unzip', 'evil\n\u001b[31mred\u2028.zip'))!;
  assert.equal(a.path, 'evil??[31mred?.zip');
  const long = filesActivity(asyncFiles('zip', 'd/'.repeat(500)))!;
  assert.equal(Array.from(long.path!).length, 160);
  assert.ok(long.path!.endsWith('…'));
  assert.equal(filesActivity(asyncFiles('zip', '\ud800x'))!.path, '?x');
  assert.equal(filesActivity(asyncFiles('zip', '😀.zip'))!.path, '😀.zip');
});

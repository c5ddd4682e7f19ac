import assert from 'node:assert/strict';
import { test } from 'node:test';
import { callCarries, decodeEditCall, encodeEditCall, isEditOp, LEASE_MARGIN_MS, leaseHolds } from './edit-call.ts';
import { GRACE_MS, lockValue } from './lock-value.ts';

const NOW = Date.parse('2026-12-03T17:00:00Z');

test('a lease holds for a file-write lock dated within the grace less the margin, either way, and for nothing else', () => {
  const limit = GRACE_MS - LEASE_MARGIN_MS;
  assert.equal(leaseHolds(lockValue('file-write', new Date(NOW)), NOW), true);
  assert.equal(leaseHolds(lockValue('file-write', new Date(NOW - limit + 1000)), NOW), true);
  assert.equal(leaseHolds(lockValue('file-write', new Date(NOW - limit)), NOW), false);
  assert.equal(leaseHolds(lockValue('file-write', new Date(NOW + limit)), NOW), false);
  for (const kind of ['config-write', 'restore', 'migration', 'export']) assert.equal(leaseHolds(lockValue(kind, new Date(NOW)), NOW), false, kind);
  for (const v of ['', 'file-write', 'file-write@', 'file-write@yesterday', '@2026-12-03T17:00:00Z']) assert.equal(leaseHolds(v, NOW), false, v);
});

test('a call decodes to what was encoded; a body of another shape is named, not run', () => {
  const call = { argv: ['files', '--op', 'mkdir', '--path', 'a'], env: { FELIS_TRASH: 'on', FELIS_BATCH_0: 'x', FELIS_FILE_CONTENT_PARTS: '1' }, lock: 'file-write@2026-12-03T17:00:00Z' };
  assert.deepEqual(decodeEditCall(encodeEditCall(call)), call);
  const bad: [string, RegExp][] = [
    ['{', /not JSON/],
    ['null', /not an object/],
    [JSON.stringify({ ...call, argv: [] }), /argv/],
    [JSON.stringify({ ...call, argv: ['export', '--mode', 'files'] }), /start with files/],
    [JSON.stringify({ ...call, argv: ['files', 7] }), /argv/],
    [JSON.stringify({ ...call, env: { NODE_OPTIONS: '--inspect' } }), /NODE_OPTIONS/],
    [JSON.stringify({ ...call, env: { FELIS_TRASH: 1 } }), /must be a string/],
    [JSON.stringify({ ...call, lock: undefined }), /lock/],
  ];
  for (const [body, why] of bad) assert.match(decodeEditCall(body) as string, why, body);
});

test("only the op's own env travels: content, items, trash, actor, op id", () => {
  for (const n of ['FELIS_FILE_CONTENT_PARTS', 'FELIS_FILE_CONTENT_0', 'FELIS_BATCH_PARTS', 'FELIS_BATCH_12', 'FELIS_TRASH', 'FELIS_TRASH_SECONDS', 'FELIS_ACTOR', 'FELIS_OP_ID'])
    assert.equal(callCarries(n), true, n);
  for (const n of ['NODE_OPTIONS', 'FELIS_PULL_ALLOW', 'FELIS_UPLOAD_TOKEN', 'FELIS_POD_IP', 'FELIS_SERVE_TOKEN_SHA256', 'PATH', 'FELIS_BATCH_X']) assert.equal(callCarries(n), false, n);
  assert.deepEqual(['write', 'mkdir', 'delete', 'rename', 'copy', 'delete-many', 'move-many', 'chmod-many'].filter(isEditOp).length, 8);
  for (const op of ['list', 'read', 'unzip', 'zip', 'pull', 'compress', 'upload', 'trash-restore', 'trash-purge']) assert.equal(isEditOp(op), false, op);
});

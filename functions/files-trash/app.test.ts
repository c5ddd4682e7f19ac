import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FileEditError } from '../../lib/files/errors.ts';
import { MaintenanceBusyError, NotStoppedError } from '../../lib/maintenance/errors.ts';
import type { TrashItem } from '../../lib/protocol/result.ts';
import { envelopeOf, FakeGates, fakeEditor, RUNNING_SERVER, realGates, routeKit, TOKEN } from '../../lib/testing/route-kit.ts';
import { filesTrash } from './app.ts';

const ID = '0190a1b2c3d4e5f6';
const OTHER = '0190a1b2c3d40001';
const S = '/api/v1/servers/survival/files/trash';

function item(id: string, extra: Record<string, unknown> = {}): TrashItem {
  return {
    id,
    op: 'delete',
    paths: ['plugins/old', 'plugins/old.yml'],
    bytes: 4096,
    entries: 3,
    at: '2026-12-03T10:00:00.000Z',
    expires_at: '2026-12-10T10:00:00.000Z',
    actor: 'bearer',
    ...extra,
  } as TrashItem;
}

function kit(answers: Parameters<typeof fakeEditor>[1] = {}) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, answers);
  return { ...routeKit(filesTrash, { gates, editor: ed.editor }), calls: ed.calls };
}

test("the listing maps the Job's page: trash_items to items (exactly their fields, in order), trash_next to next, trash_bytes; no lock, no audit", async () => {
  const k = kit({ trashList: () => ({ items: [item(ID, { stray: 'x' }), item(OTHER, { op: 'unzip', actor: '' })], next: OTHER, trashBytes: 8192 }) });
  const r = await k.call('GET', `${S}?limit=2&after=0190a1b2c3d4ffff`);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { items: [item(ID), item(OTHER, { op: 'unzip', actor: '' })], next: OTHER, trash_bytes: 8192 });
  assert.deepEqual(Object.keys(r.body.items[0]), ['id', 'op', 'paths', 'bytes', 'entries', 'at', 'actor', 'expires_at']);
  assert.equal(k.calls.length, 1);
  assert.equal(k.calls[0]!.method, 'trashList');
  assert.deepEqual(k.calls[0]!.args[1], { limit: 2, after: '0190a1b2c3d4ffff' });
  assert.equal(k.calls[0]!.locked, false);
  assert.equal(k.gates.ran.length, 0, 'no world lock');
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'trash-list', path: '.' } }]);
  assert.equal(k.audits().length, 0);
});

test('a running server: the trash is listed (no lock), but a restore and a purge are 409 not_stopped; RWOP lists 409 volume_exclusive; off, 409 not_stopped', async () => {
  const k = kit({ trashList: () => ({ items: [item(ID)], trashBytes: 4096 }), trashRestore: () => ({ restored: [] }), trashPurge: () => ({ purged: 1, bytes: 1 }) });
  const running = realGates(RUNNING_SERVER);
  k.deps.gates = running.gates;
  const r = await k.call('GET', S);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { items: [item(ID)], trash_bytes: 4096 });
  assert.deepEqual(k.calls[0]!.args[0], { server: 'survival', world: { claim: 'world-survival-0', node: 'node-b' }, worldState: 'running' });
  for (const [m, p, body] of [
    ['POST', `${S}/${ID}/restore`, {}],
    ['DELETE', `${S}/${ID}`, undefined],
    ['DELETE', S, undefined],
  ] as const) {
    const x = await k.call(m, p, body);
    assert.equal(x.status, 409, `${m} ${p}`);
    assert.equal(envelopeOf(x).code, 'not_stopped');
  }
  assert.equal(
    running.api.calls.some((c) => c.startsWith('patch')),
    false,
    'no lock',
  );
  k.deps.gates = realGates(RUNNING_SERVER, { modes: ['ReadWriteOncePod'] }).gates;
  assert.equal(envelopeOf(await k.call('GET', S)).code, 'volume_exclusive');
  k.deps.gates = realGates(RUNNING_SERVER, { readWhileRunning: false }).gates;
  assert.equal(envelopeOf(await k.call('GET', S)).code, 'not_stopped');
  assert.equal(k.calls.length, 1, 'only the listing ran a Job');
});

test('the last page has no next; without limit or after the Job is told neither (its default page); an empty after is none', async () => {
  const k = kit({ trashList: () => ({ items: [], trashBytes: 0 }) });
  const r = await k.call('GET', S);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { items: [], trash_bytes: 0 });
  assert.deepEqual(k.calls[0]!.args[1], {});
  await k.call('GET', `${S}?after=`);
  assert.deepEqual(k.calls[1]!.args[1], {});
});

test('a bad limit or after is 400 bad_request before any Job (after the server is known)', async () => {
  for (const q of ['limit=0', 'limit=5001', 'limit=ten', 'after=xyz', `after=${ID.toUpperCase()}`, `after=${ID}0`]) {
    const k = kit();
    const r = await k.call('GET', `${S}?${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(envelopeOf(r).code, 'bad_request', q);
    assert.equal(k.calls.length, 0, q);
  }
  const k = kit();
  k.gates.enterError = new NotStoppedError();
  const r = await k.call('GET', `${S}?limit=0`);
  assert.equal(envelopeOf(r).code, 'not_stopped', 'the server first, then the query');
});

test('restore runs under the world lock, answers {id, restored}, and is audited file.trash.restore as server:id', async () => {
  const k = kit({ trashRestore: () => ({ restored: ['plugins/old', 'plugins/old.yml'] }) });
  const r = await k.call('POST', `${S}/${ID}/restore`, {});
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { id: ID, restored: ['plugins/old', 'plugins/old.yml'] });
  assert.equal(k.calls.length, 1);
  assert.equal(k.calls[0]!.method, 'trashRestore');
  assert.deepEqual(k.calls[0]!.args.slice(1, 3), [ID, undefined]);
  assert.equal(k.calls[0]!.locked, true);
  assert.deepEqual(k.gates.ran, [{ server: 'survival', access: { op: 'trash-restore', path: '.' } }]);
  const [a] = k.audits();
  assert.equal(a!.action, 'file.trash.restore');
  assert.equal(a!.target, `survival:${ID}`);
  assert.deepEqual(a!.payload, { restored: ['plugins/old', 'plugins/old.yml'] });
});

test('restore under a folder passes `to` to the Job; a bad `to` is 400 bad_path, an unknown field 400 bad_request, all before any Job; the body may be left out', async () => {
  const k = kit({ trashRestore: () => ({ restored: ['restored/plugins/old'] }) });
  const r = await k.call('POST', `${S}/${ID}/restore`, { to: 'restored' });
  assert.equal(r.status, 200, r.text);
  assert.equal(k.calls[0]!.args[2], 'restored');
  assert.equal(k.audits()[0]!.payload && (k.audits()[0]!.payload as { to: string }).to, 'restored');
  for (const [body, code] of [
    [{ to: 'a\u0000b' }, 'bad_path'],
    [{ to: '' }, 'bad_request'],
    [{ to: 3 }, 'bad_request'],
    [{ into: 'x' }, 'bad_request'],
  ] as const) {
    const b = kit();
    const res = await b.call('POST', `${S}/${ID}/restore`, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(envelopeOf(res).code, code, JSON.stringify(body));
    assert.equal(b.calls.length, 0);
    assert.equal(b.gates.ran.length, 0);
  }
  const absent = kit({ trashRestore: () => ({ restored: ['plugins/old'] }) });
  assert.equal((await absent.call('POST', `${S}/${ID}/restore`)).status, 200);
});

test('restore onto a path that exists again is 409 file_exists naming it; an unknown record 404 trash_not_found; neither audited', async () => {
  const exists = kit({
    trashRestore: () => {
      throw new FileEditError('exists', 'plugins/old exists', 'plugins/old');
    },
  });
  const r = await exists.call('POST', `${S}/${ID}/restore`, {});
  assert.equal(r.status, 409);
  assert.equal(envelopeOf(r).code, 'file_exists');
  assert.equal(r.body.error.path, 'plugins/old');
  assert.equal(exists.audits().length, 0);
  const gone = kit({
    trashRestore: () => {
      throw new FileEditError('trash_not_found', `no record ${ID}`);
    },
  });
  const g = await gone.call('POST', `${S}/${ID}/restore`, {});
  assert.equal(g.status, 404);
  assert.equal(envelopeOf(g).code, 'trash_not_found');
  assert.equal(gone.audits().length, 0);
});

test('a malformed id is 400 bad_request before any Job or lock, on every route that takes one', async () => {
  for (const bad of ['0190a1b2c3d4e5f', '0190a1b2c3d4e5f6a', '0190A1B2C3D4E5F6', 'zzzzzzzzzzzzzzzz', '0190a1b2c3d4e5f6%00']) {
    for (const [method, path, body] of [
      ['POST', `${S}/${bad}/restore`, {}],
      ['DELETE', `${S}/${bad}`, undefined],
    ] as const) {
      const k = kit();
      const r = await k.call(method, path, body);
      assert.equal(r.status, 400, `${method} ${path}`);
      assert.equal(envelopeOf(r).code, 'bad_request', `${method} ${path}`);
      assert.equal(k.calls.length, 0);
      assert.equal(k.gates.ran.length, 0);
    }
  }
});

test('purge of one record runs under the lock, answers {id, purged, bytes}, audited file.trash.purge as server:id; unknown is 404 trash_not_found', async () => {
  const k = kit({ trashPurge: () => ({ purged: 1, bytes: 4096 }) });
  const r = await k.call('DELETE', `${S}/${ID}`);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { id: ID, purged: 1, bytes: 4096 });
  assert.equal(k.calls[0]!.method, 'trashPurge');
  assert.equal(k.calls[0]!.args[1], ID);
  assert.equal(k.calls[0]!.locked, true);
  const [a] = k.audits();
  assert.deepEqual([a!.action, a!.target], ['file.trash.purge', `survival:${ID}`]);
  assert.deepEqual(a!.payload, { purged: 1, bytes: 4096 });
  const gone = kit({
    trashPurge: () => {
      throw new FileEditError('trash_not_found');
    },
  });
  const g = await gone.call('DELETE', `${S}/${ID}`);
  assert.equal(g.status, 404);
  assert.equal(envelopeOf(g).code, 'trash_not_found');
  assert.equal(gone.audits().length, 0);
});

test('purge of everything: no id to the Job, {purged, bytes}, audited as server:*; an empty trash is answered but not audited', async () => {
  let answer = { purged: 3, bytes: 9000 };
  const k = kit({ trashPurge: () => answer });
  const r = await k.call('DELETE', S);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { purged: 3, bytes: 9000 });
  assert.equal(k.calls[0]!.args[1], undefined);
  assert.equal(k.calls[0]!.locked, true);
  const [a] = k.audits();
  assert.deepEqual([a!.action, a!.target], ['file.trash.purge', 'survival:*']);
  answer = { purged: 0, bytes: 0 };
  const empty = await k.call('DELETE', S);
  assert.deepEqual(empty.body, { purged: 0, bytes: 0 });
  assert.equal(k.audits().length, 1);
});

test('while the world is held the changes are 409 maintenance_in_progress with no Job; the listing still runs', async () => {
  const k = kit({ trashList: () => ({ items: [], trashBytes: 0 }) });
  k.gates.runError = new MaintenanceBusyError('restore');
  for (const [method, path, body] of [
    ['POST', `${S}/${ID}/restore`, {}],
    ['DELETE', `${S}/${ID}`, undefined],
    ['DELETE', S, undefined],
  ] as const) {
    const r = await k.call(method, path, body);
    assert.equal(r.status, 409, `${method} ${path}`);
    assert.equal(envelopeOf(r).code, 'maintenance_in_progress');
  }
  assert.equal(k.calls.length, 0);
  assert.equal((await k.call('GET', S)).status, 200);
  assert.equal(k.audits().length, 0);
});

function event(type: string, data: unknown, id = 'ev-1') {
  return {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-id': id, 'ce-source': '/tests/trash', 'ce-type': type },
    body: JSON.stringify(data),
  };
}

test('events: list with its page, restore and purge by their data.id, served by the same routes; a missing or bad id is refused', async () => {
  const k = kit({ trashList: () => ({ items: [item(ID)], trashBytes: 1 }), trashRestore: () => ({ restored: ['a'] }), trashPurge: () => ({ purged: 1, bytes: 2 }) });
  const l = await k.app.request('/', event('dev.felis.files.trash.list', { server: 'survival', limit: 1 }));
  assert.equal(l.status, 200, await l.clone().text());
  assert.deepEqual(((await l.json()) as any).items, [item(ID)]);
  assert.deepEqual(k.calls[0]!.args[1], { limit: 1 });
  const rs = await k.app.request('/', event('dev.felis.files.trash.restore', { server: 'survival', id: ID, body: { to: 'back' } }, 'ev-2'));
  assert.equal(rs.status, 200);
  assert.deepEqual(await rs.json(), { id: ID, restored: ['a'] });
  assert.deepEqual(k.calls[1]!.args.slice(1, 3), [ID, 'back']);
  const p = await k.app.request('/', event('dev.felis.files.trash.purge', { server: 'survival', id: ID }, 'ev-3'));
  assert.deepEqual(await p.json(), { id: ID, purged: 1, bytes: 2 });
  const missing = await k.app.request('/', event('dev.felis.files.trash.purge', { server: 'survival' }, 'ev-4'));
  assert.equal(missing.status, 400);
  assert.equal(((await missing.json()) as any).error.code, 'event_data_invalid');
  const bad = await k.app.request('/', event('dev.felis.files.trash.purge', { server: 'survival', id: 'nope' }, 'ev-5'));
  assert.equal(bad.status, 400);
  assert.equal(((await bad.json()) as any).error.code, 'bad_request');
  assert.equal(k.calls.length, 3);
});

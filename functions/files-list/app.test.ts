import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NotStoppedError } from '../../lib/maintenance/errors.ts';
import { envelopeOf, FakeGates, fakeEditor, RUNNING_SERVER, realGates, routeKit, TOKEN } from '../../lib/testing/route-kit.ts';
import { filesList } from './app.ts';

function kit(free: number) {
  const gates = new FakeGates();
  const entries = [{ name: 'world', size: 0, is_dir: true, mod_time: '2026-11-29T10:00:00Z' }];
  const ed = fakeEditor(gates, { list: () => ({ entries, truncated: false, free }) });
  return { ...routeKit(filesList, { gates, editor: ed.editor }), calls: ed.calls };
}

test('a listing of the root needs no path, takes no lock, and reports free bytes (null when unknown)', async () => {
  const k = kit(1234);
  const r = await k.call('GET', '/api/v1/servers/survival/files');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, {
    path: '',
    entries: [{ name: 'world', size: 0, is_dir: true, mod_time: '2026-11-29T10:00:00Z' }],
    truncated: false,
    free_bytes: 1234,
    trash_bytes: 0,
    world_state: 'stopped',
  });
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'list', path: '' } }]);
  assert.equal(k.gates.ran.length, 0);
  assert.equal((await kit(-1).call('GET', '/api/v1/servers/survival/files?path=world')).body.free_bytes, null);
  assert.equal((await kit(0).call('GET', '/api/v1/servers/survival/files?path=world')).body.free_bytes, 0);
});

test('a running server is 409 not_stopped; a bad name 400 bad_name; no Job either way', async () => {
  const k = kit(0);
  k.gates.enterError = new NotStoppedError();
  const r = await k.call('GET', '/api/v1/servers/survival/files');
  assert.equal(r.status, 409);
  assert.equal(envelopeOf(r).code, 'not_stopped');
  const b = await k.call('GET', '/api/v1/servers/-bad-/files');
  assert.equal(b.status, 400);
  assert.equal(envelopeOf(b).code, 'bad_name');
  assert.equal(k.calls.length, 0);
});

test('with a browse session the listing comes from it (no Job); without an answer from it, from the one-shot Job', async () => {
  const k = kit(1234);
  const asked: Array<{ op: string; path: string; server: string }> = [];
  let answer: string | undefined = JSON.stringify({ entries: [{ name: 'plugins', size: 0, is_dir: true, mod_time: '2026-11-30T10:00:00Z' }], avail: 99 });
  k.deps.browse = {
    run: async (t, op, path) => {
      asked.push({ op, path, server: t.server });
      return answer;
    },
  };
  const r = await k.call('GET', '/api/v1/servers/survival/files?path=world');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, {
    path: 'world',
    entries: [{ name: 'plugins', size: 0, is_dir: true, mod_time: '2026-11-30T10:00:00Z' }],
    truncated: false,
    free_bytes: 99,
    trash_bytes: 0,
    world_state: 'stopped',
  });
  assert.deepEqual(asked, [{ op: 'list', path: 'world', server: 'survival' }]);
  assert.equal(k.calls.length, 0, 'no one-shot Job');
  answer = JSON.stringify({ code: 'not_found', error: 'nope does not exist' });
  const missing = await k.call('GET', '/api/v1/servers/survival/files?path=nope');
  assert.equal(missing.status, 404);
  assert.equal(envelopeOf(missing).code, 'not_found');
  answer = undefined;
  const fallback = await k.call('GET', '/api/v1/servers/survival/files?path=world');
  assert.equal(fallback.body.free_bytes, 1234);
  assert.equal(k.calls.length, 1, 'the one-shot Job answered');
  k.gates.enterError = new NotStoppedError();
  assert.equal((await k.call('GET', '/api/v1/servers/survival/files')).status, 409);
  assert.equal(asked.length, 3, 'a refused request never reaches the session');
});

test('a running server is listed (plain and paged), by a Job pinned to its node, and the answer says world_state running; RWOP is 409 volume_exclusive; off, 409 not_stopped', async () => {
  const k = kit(7);
  const running = realGates(RUNNING_SERVER);
  k.deps.gates = running.gates;
  for (const url of ['/api/v1/servers/survival/files', '/api/v1/servers/survival/files?path=world&limit=10&q=r']) {
    const r = await k.call('GET', url);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.world_state, 'running');
    assert.deepEqual(
      r.body.entries.map((e: { name: string }) => e.name),
      ['world'],
    );
    assert.deepEqual(k.calls.at(-1)!.args[0], { server: 'survival', world: { claim: 'world-survival-0', node: 'node-b' }, worldState: 'running' });
  }
  assert.equal(
    running.api.calls.some((c) => c.startsWith('patch')),
    false,
    'no lock',
  );
  k.deps.gates = realGates(RUNNING_SERVER, { modes: ['ReadWriteOncePod'] }).gates;
  const exclusive = await k.call('GET', '/api/v1/servers/survival/files');
  assert.equal(exclusive.status, 409);
  assert.equal(envelopeOf(exclusive).code, 'volume_exclusive');
  assert.match(envelopeOf(exclusive).message, /ReadWriteOncePod/);
  k.deps.gates = realGates(RUNNING_SERVER, { readWhileRunning: false }).gates;
  const off = await k.call('GET', '/api/v1/servers/survival/files');
  assert.equal(off.status, 409);
  assert.equal(envelopeOf(off).code, 'not_stopped');
  assert.equal(k.calls.length, 2, 'no Job for a refused listing');
});

/** A fake editor whose listing is a page of `names` by the query it is given, as the Job pages. */
function pagedKit(names: string[]) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, {
    list: (...args: unknown[]) => {
      const q = args[3] as { limit?: number; after?: string; q?: string } | undefined;
      const sorted = [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      const fit = sorted.filter((n) => (q?.after === undefined || Buffer.compare(Buffer.from(n), Buffer.from(q.after)) > 0) && (!q?.q || n.toLowerCase().includes(q.q.toLowerCase())));
      const limit = q?.limit ?? 2000;
      const entries = fit.slice(0, limit).map((name) => ({ name, size: 0, is_dir: false, mod_time: '2026-11-29T10:00:00Z', mode: '644', is_symlink: false }));
      return { entries, truncated: fit.length > limit, free: 5 };
    },
  });
  return { ...routeKit(filesList, { gates, editor: ed.editor }), calls: ed.calls };
}

test('without limit, after or q the listing is the original one (no query to the Job, no next); with any, a page with next while there are more', async () => {
  const k = pagedKit(['c', 'a', 'B', 'é', 'b']);
  const plain = await k.call('GET', '/api/v1/servers/survival/files?path=d');
  assert.equal(plain.status, 200, plain.text);
  assert.equal(plain.body.next, undefined);
  assert.deepEqual(k.calls.at(-1)!.args.slice(1), ['d', k.calls.at(-1)!.args[2], undefined], "no query: the Job runs Felis's listing");
  const names: string[] = [];
  let url = '/api/v1/servers/survival/files?path=d&limit=2';
  for (let i = 0; i < 5; i++) {
    const r = await k.call('GET', url);
    assert.equal(r.status, 200, r.text);
    names.push(...r.body.entries.map((e: { name: string }) => e.name));
    assert.deepEqual(
      Object.keys(r.body),
      r.body.truncated ? ['path', 'entries', 'truncated', 'next', 'free_bytes', 'trash_bytes', 'world_state'] : ['path', 'entries', 'truncated', 'free_bytes', 'trash_bytes', 'world_state'],
    );
    if (!r.body.truncated) break;
    assert.equal(r.body.next, r.body.entries.at(-1).name);
    url = `/api/v1/servers/survival/files?path=d&limit=2&after=${encodeURIComponent(r.body.next)}`;
  }
  assert.deepEqual(names, ['B', 'a', 'b', 'c', 'é']);
  assert.deepEqual(k.calls.at(-1)!.args[3], { limit: 2, after: 'c' });
  // q alone: the default page size goes to the Job; an empty after or q is not sent.
  await k.call('GET', '/api/v1/servers/survival/files?path=d&q=%C3%89&after=');
  assert.deepEqual(k.calls.at(-1)!.args[3], { limit: 1000, q: 'É' });
  const empty = await k.call('GET', '/api/v1/servers/survival/files?path=d&q=');
  assert.deepEqual(k.calls.at(-1)!.args[3], { limit: 1000 });
  assert.equal(empty.body.entries.length, 5);
});

test('a limit outside 1..5000 or not a whole number, or an after or q no name could be, is 400 bad_request before the gates', async () => {
  const k = pagedKit(['a']);
  for (const bad of ['0', '5001', '-1', '1.5', 'ten', '', '01', '1e3', '99999999999999999999']) {
    const r = await k.call('GET', `/api/v1/servers/survival/files?path=d&limit=${bad}`);
    assert.equal(r.status, 400, bad);
    assert.equal(envelopeOf(r).code, 'bad_request');
    assert.equal(envelopeOf(r).message, 'the ?limit= query parameter must be a whole number from 1 to 5000');
  }
  for (const ok of ['1', '500', '4999', '5000']) assert.equal((await k.call('GET', `/api/v1/servers/survival/files?path=d&limit=${ok}`)).status, 200, ok);
  const nul = await k.call('GET', '/api/v1/servers/survival/files?path=d&after=a%00b');
  assert.equal(nul.status, 400);
  assert.equal(envelopeOf(nul).message, 'the ?after= query parameter cannot contain a NUL byte');
  const long = await k.call('GET', `/api/v1/servers/survival/files?path=d&q=${'x'.repeat(256)}`);
  assert.equal(long.status, 400);
  assert.equal(envelopeOf(long).message, 'the ?q= query parameter is longer than 255 bytes');
  assert.equal(envelopeOf(await k.call('GET', '/api/v1/servers/survival/files?path=d&q=%FF')).code, 'bad_request');
  assert.equal(envelopeOf(await k.call('GET', '/api/v1/servers/-bad-/files?limit=0')).code, 'bad_name', 'the name first');
  assert.equal(k.gates.entered.length, 4, 'only the good limits reached the gates');
  assert.equal(k.calls.length, 4);
});

test("a paged listing through a browse session carries the same query, and its answer gets next as the Job's does", async () => {
  const k = pagedKit([]);
  const asked: unknown[] = [];
  k.deps.browse = {
    run: async (_t, op, path, _s, _e, query) => {
      asked.push({ op, path, query });
      return JSON.stringify({ entries: [{ name: 'x', size: 1, is_dir: false, mod_time: '2026-11-30T10:00:00Z', mode: '600', is_symlink: true }], truncated: true, avail: 9 });
    },
  };
  const r = await k.call('GET', '/api/v1/servers/survival/files?path=world&limit=1&after=w&q=X');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, {
    path: 'world',
    entries: [{ name: 'x', size: 1, is_dir: false, mod_time: '2026-11-30T10:00:00Z', mode: '600', is_symlink: true }],
    truncated: true,
    next: 'x',
    free_bytes: 9,
    trash_bytes: 0,
    world_state: 'stopped',
  });
  assert.deepEqual(asked, [{ op: 'list', path: 'world', query: { limit: 1, after: 'w', q: 'X' } }]);
  assert.equal(k.calls.length, 0, 'no one-shot Job');
  await k.call('GET', '/api/v1/servers/survival/files?path=world');
  // Felis's listing, which came back cut short, then the paged form's first page, both by the session.
  assert.deepEqual(asked.slice(-2), [
    { op: 'list', path: 'world', query: undefined },
    { op: 'list', path: 'world', query: { limit: 2000 } },
  ]);
  assert.equal(k.calls.length, 0, 'no one-shot Job');
});

test('the CloudEvent dev.felis.files.list carries limit, after and q as the query does, judged by the same schema', async () => {
  const k = pagedKit(['a', 'b', 'c']);
  const deliver = async (data: unknown) => {
    const res = await k.app.request('/', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        'ce-specversion': '1.0',
        'ce-id': `ev-${Math.random()}`,
        'ce-source': '/tests/list',
        'ce-type': 'dev.felis.files.list',
      },
      body: JSON.stringify(data),
    });
    return { status: res.status, body: JSON.parse(await res.text()) };
  };
  const r = await deliver({ server: 'survival', path: 'world', limit: 1, after: 'a' });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(
    r.body.entries.map((e: { name: string }) => e.name),
    ['b'],
  );
  assert.equal(r.body.next, 'b');
  assert.deepEqual(k.calls.at(-1)!.args.slice(1, 2), ['world']);
  assert.deepEqual(k.calls.at(-1)!.args[3], { limit: 1, after: 'a' });
  const found = await deliver({ server: 'survival', path: 'world', q: 'C' });
  assert.deepEqual(
    found.body.entries.map((e: { name: string }) => e.name),
    ['c'],
  );
  assert.deepEqual(k.calls.at(-1)!.args[3], { limit: 1000, q: 'C' });
  // Without a query the event is Felis's listing, as the plain GET is.
  assert.equal((await deliver({ server: 'survival', path: 'world' })).status, 200);
  assert.equal(k.calls.at(-1)!.args[3], undefined);
  assert.equal((await deliver({ server: 'survival', limit: 0 })).body.error.code, 'bad_request');
});

test("free_bytes counts the undo trash's bytes as free (a mutation takes them back when it needs room), and trash_bytes says how many; null stays null", async () => {
  const gates = new FakeGates();
  let listing = { entries: [], truncated: false, free: 1000, trashBytes: 234 };
  const ed = fakeEditor(gates, { list: () => listing });
  const k = routeKit(filesList, { gates, editor: ed.editor });
  const r = await k.call('GET', '/api/v1/servers/survival/files');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual([r.body.free_bytes, r.body.trash_bytes], [1234, 234]);
  listing = { entries: [], truncated: false, free: -1, trashBytes: 234 };
  const unknown = await k.call('GET', '/api/v1/servers/survival/files');
  assert.deepEqual([unknown.body.free_bytes, unknown.body.trash_bytes], [null, 234]);
  // From a browse Pod, the Job's own result fields: avail plus trash_bytes.
  k.deps.browse = { run: async () => JSON.stringify({ entries: [], avail: 10, trash_bytes: 5 }) };
  const warm = await k.call('GET', '/api/v1/servers/survival/files');
  assert.deepEqual([warm.body.free_bytes, warm.body.trash_bytes], [15, 5]);
});

test('a plain listing cut at 2000 answers the paged form’s first page of 2000 with next, from which the paged form goes on', async () => {
  // 2001 names in a "directory order" that is not byte order.
  const names = Array.from({ length: 2001 }, (_, i) => `f${String((i * 7919) % 2001).padStart(4, '0')}`);
  const entry = (name: string) => ({ name, size: 0, is_dir: false, mod_time: '2026-11-29T10:00:00Z', mode: '644', is_symlink: false });
  const gates = new FakeGates();
  const ed = fakeEditor(gates, {
    list: (...args: unknown[]) => {
      const q = args[3] as { limit?: number; after?: string } | undefined;
      if (!q) return { entries: names.slice(0, 2000).map(entry), truncated: true, free: 5 };
      const fit = [...names].sort().filter((n) => q.after === undefined || n > q.after);
      return { entries: fit.slice(0, q.limit).map(entry), truncated: fit.length > q.limit!, free: 5 };
    },
  });
  const k = { ...routeKit(filesList, { gates, editor: ed.editor }), calls: ed.calls };
  const r = await k.call('GET', '/api/v1/servers/survival/files?path=big');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.truncated, true);
  assert.equal(r.body.entries.length, 2000);
  assert.deepEqual(
    r.body.entries.map((e: { name: string }) => e.name),
    [...names].sort().slice(0, 2000),
  );
  assert.equal(r.body.next, 'f1999');
  assert.deepEqual(
    k.calls.map((c) => c.args[3]),
    [undefined, { limit: 2000 }],
    "Felis's listing first, then the first page",
  );
  const rest = await k.call('GET', `/api/v1/servers/survival/files?path=big&after=${r.body.next}`);
  assert.deepEqual(
    rest.body.entries.map((e: { name: string }) => e.name),
    ['f2000'],
  );
  assert.equal(rest.body.truncated, false);
  // Should the page fail (a Job program that does not page), the plain listing is the answer, as before.
  const failing = fakeEditor(new FakeGates(), {
    list: (...args: unknown[]) => {
      if (args[3]) throw new Error('unknown flag --limit');
      return { entries: names.slice(0, 2000).map(entry), truncated: true, free: 5 };
    },
  });
  const plainOnly = await routeKit(filesList, { editor: failing.editor }).call('GET', '/api/v1/servers/survival/files?path=big');
  assert.equal(plainOnly.status, 200, plainOnly.text);
  assert.deepEqual([plainOnly.body.entries.length, plainOnly.body.entries[0].name, plainOnly.body.truncated, 'next' in plainOnly.body], [2000, names[0], true, false]);
  // A plain listing that fits is answered as it came, with one call.
  const small = pagedKit(['b', 'a']);
  const s = await small.call('GET', '/api/v1/servers/survival/files?path=d');
  assert.equal(s.body.next, undefined);
  assert.equal(small.calls.length, 1);
});

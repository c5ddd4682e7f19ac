import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FileEditError } from '../../lib/files/errors.ts';
import { NotStoppedError } from '../../lib/maintenance/errors.ts';
import { envelopeOf, FakeGates, fakeEditor, RUNNING_SERVER, realGates, routeKit, TOKEN } from '../../lib/testing/route-kit.ts';
import { filesSearch } from './app.ts';

const level = { path: 'world/level.dat', name: 'level.dat', size: 5, is_dir: false, mod_time: '2026-11-29T10:00:00Z' };

const hit = { path: 'server.properties', line: 2, column: 15, text: 'rcon.password=<redacted by felis>' };
const contentAnswer = { matches: [hit], truncated: false, scanned_files: 3, scanned_bytes: 120 };

function kit(answer: () => unknown = () => ({ matches: [level], truncated: false, scanned: 42 }), content: () => unknown = () => contentAnswer) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, { search: answer, searchContent: content });
  return { ...routeKit(filesSearch, { gates, editor: ed.editor }), calls: ed.calls };
}

test("a search of the root by default: the one-shot Job's answer, with the query echoed; no lock, no audit", async () => {
  const k = kit();
  const r = await k.call('GET', '/api/v1/servers/survival/files/search?q=level');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: '', q: 'level', matches: [level], truncated: false, scanned: 42 });
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'search', path: '' } }]);
  assert.equal(k.gates.ran.length, 0, 'no world lock');
  assert.deepEqual(k.audits(), []);
  assert.equal(k.calls.length, 1);
  assert.deepEqual(k.calls[0].args.slice(1, 3), ['', { q: 'level' }]);
  const sub = await k.call('GET', '/api/v1/servers/survival/files/search?path=world&q=*.yml&limit=1000');
  assert.equal(sub.status, 200, sub.text);
  assert.equal(sub.body.path, 'world');
  assert.deepEqual(k.calls[1].args.slice(1, 3), ['world', { q: '*.yml', limit: 1000 }]);
});

test('q shorter than 2 characters, or missing, and a limit outside 1–1000 are 400 bad_request; no Job', async () => {
  const k = kit();
  for (const qs of ['q=a', 'q=', '', 'q=%F0%9F%8E%89', 'q=ab&limit=0', 'q=ab&limit=1001', 'q=ab&limit=-1', 'q=ab&limit=1.5', 'q=ab&limit=x', 'q=ab&limit=']) {
    const r = await k.call('GET', `/api/v1/servers/survival/files/search?${qs}`);
    assert.equal(r.status, 400, `${qs}: ${r.text}`);
    assert.equal(envelopeOf(r).code, 'bad_request', qs);
  }
  assert.equal(k.calls.length, 0);
  // One character that is two UTF-16 units is still one character; two of them are enough.
  assert.equal((await k.call('GET', '/api/v1/servers/survival/files/search?q=%F0%9F%8E%89%F0%9F%8E%89')).status, 200);
  assert.equal((await k.call('GET', '/api/v1/servers/survival/files/search?q=ab&limit=1')).status, 200);
});

test('a running server is searched by a Job pinned to its node, with no lock; RWOP is 409 volume_exclusive; off, 409 not_stopped', async () => {
  const k = kit();
  const running = realGates(RUNNING_SERVER);
  k.deps.gates = running.gates;
  const r = await k.call('GET', '/api/v1/servers/survival/files/search?path=world&q=level');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.matches, [level]);
  assert.deepEqual(k.calls[0]!.args[0], { server: 'survival', world: { claim: 'world-survival-0', node: 'node-b' }, worldState: 'running' });
  assert.equal(
    running.api.calls.some((c) => c.startsWith('patch')),
    false,
    'no lock',
  );
  k.deps.gates = realGates(RUNNING_SERVER, { modes: ['ReadWriteOncePod'] }).gates;
  assert.equal(envelopeOf(await k.call('GET', '/api/v1/servers/survival/files/search?q=level')).code, 'volume_exclusive');
  k.deps.gates = realGates(RUNNING_SERVER, { readWhileRunning: false }).gates;
  assert.equal(envelopeOf(await k.call('GET', '/api/v1/servers/survival/files/search?q=level')).code, 'not_stopped');
  assert.equal(k.calls.length, 1, 'no Job for a refused search');
});

test('the front comes first: a bad name is 400 bad_name, a running server 409 not_stopped, whatever the query', async () => {
  const k = kit();
  assert.equal(envelopeOf(await k.call('GET', '/api/v1/servers/-bad-/files/search?q=a')).code, 'bad_name');
  k.gates.enterError = new NotStoppedError();
  const r = await k.call('GET', '/api/v1/servers/survival/files/search?q=a');
  assert.equal(r.status, 409);
  assert.equal(envelopeOf(r).code, 'not_stopped');
  assert.equal(k.calls.length, 0);
});

test("the Job's refusals are the envelope's: a missing folder 404 not_found, a file 400 bad_path", async () => {
  let err = new FileEditError('not_found', 'nope does not exist');
  const k = kit(() => {
    throw err;
  });
  const missing = await k.call('GET', '/api/v1/servers/survival/files/search?path=nope&q=level');
  assert.equal(missing.status, 404);
  assert.equal(envelopeOf(missing).code, 'not_found');
  err = new FileEditError('bad_path', 'server.properties is not a folder, or a name on the way to it is a file');
  const file = await k.call('GET', '/api/v1/servers/survival/files/search?path=server.properties&q=level');
  assert.equal(file.status, 400);
  assert.equal(envelopeOf(file).code, 'bad_path');
});

test('with a browse session the search comes from it, query and all (no Job); without an answer from it, from the one-shot Job', async () => {
  const k = kit();
  const asked: unknown[] = [];
  let answer: string | undefined = JSON.stringify({ matches: [level], truncated: true, scanned: 7 });
  k.deps.browse = {
    run: async (t, op, path, _signal, _early, query) => {
      asked.push({ op, path, server: t.server, query });
      return answer;
    },
  };
  const r = await k.call('GET', '/api/v1/servers/survival/files/search?path=world&q=level&limit=5');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'world', q: 'level', matches: [level], truncated: true, scanned: 7 });
  assert.deepEqual(asked, [{ op: 'search', path: 'world', server: 'survival', query: { q: 'level', limit: 5 } }]);
  assert.equal(k.calls.length, 0, 'no one-shot Job');
  answer = JSON.stringify({ code: 'not_found', error: 'nope does not exist' });
  assert.equal((await k.call('GET', '/api/v1/servers/survival/files/search?path=nope&q=level')).status, 404);
  answer = undefined;
  const fallback = await k.call('GET', '/api/v1/servers/survival/files/search?q=level');
  assert.equal(fallback.body.scanned, 42);
  assert.equal(k.calls.length, 1, 'the one-shot Job answered');
  // An empty answer (nothing found) decodes to empty fields, not to absent ones.
  answer = '{}';
  assert.deepEqual((await k.call('GET', '/api/v1/servers/survival/files/search?q=zz')).body, { path: '', q: 'zz', matches: [], truncated: false, scanned: 0 });
});

test('the CloudEvent dev.felis.files.search carries path, q and limit as the query does', async () => {
  const k = kit();
  const deliver = async (data: unknown) => {
    const res = await k.app.request('/', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        'ce-specversion': '1.0',
        'ce-id': `ev-${Math.random()}`,
        'ce-source': '/tests/search',
        'ce-type': 'dev.felis.files.search',
      },
      body: JSON.stringify(data),
    });
    return { status: res.status, body: JSON.parse(await res.text()) };
  };
  const r = await deliver({ server: 'survival', path: 'world', q: 'level', limit: 3 });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.q, 'level');
  assert.deepEqual(k.calls[0].args.slice(1, 3), ['world', { q: 'level', limit: 3 }]);
  assert.equal((await deliver({ server: 'survival', q: 'a' })).body.error.code, 'bad_request');
  const c = await deliver({ server: 'survival', path: 'logs', content: 'Steve', limit: 2 });
  assert.equal(c.status, 200, JSON.stringify(c.body));
  assert.deepEqual(k.calls.at(-1)!.args.slice(1, 3), ['logs', { text: 'Steve', limit: 2 }]);
  assert.equal((await deliver({ server: 'survival', content: 'a\nb' })).body.error.code, 'bad_request');
  assert.equal((await deliver({ server: 'survival', q: 'level', after: 'x' })).body.error.code, 'event_data_invalid');
});

test('with content: the lines found, the query echoed, world_state; q filters names; no lock, no audit', async () => {
  const k = kit();
  const r = await k.call('GET', `/api/v1/servers/survival/files/search?content=${encodeURIComponent('<redacted by felis>')}`);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: '', content: '<redacted by felis>', ...contentAnswer, world_state: 'stopped' });
  assert.equal(k.calls[0].method, 'searchContent');
  assert.deepEqual(k.calls[0].args.slice(1, 3), ['', { text: '<redacted by felis>' }]);
  assert.equal(k.gates.ran.length, 0, 'no world lock');
  assert.deepEqual(k.audits(), []);
  const sub = await k.call('GET', `/api/v1/servers/survival/files/search?path=logs&q=${encodeURIComponent('*.log')}&content=Steve&limit=7`);
  assert.equal(sub.status, 200, sub.text);
  assert.deepEqual([sub.body.path, sub.body.q, sub.body.content], ['logs', '*.log', 'Steve']);
  assert.deepEqual(k.calls[1].args.slice(1, 3), ['logs', { text: 'Steve', q: '*.log', limit: 7 }]);
  // Unicode text is carried as it is.
  await k.call('GET', `/api/v1/servers/survival/files/search?content=${encodeURIComponent('Ärger 🎉')}`);
  assert.deepEqual(k.calls[2].args[2], { text: 'Ärger 🎉' });
  // A running server: its world_state says so.
  k.deps.gates = realGates(RUNNING_SERVER).gates;
  assert.equal((await k.call('GET', '/api/v1/servers/survival/files/search?content=abc')).body.world_state, 'running');
});

test('content of 0 or over 256 bytes, or with a line break or NUL, is 400 bad_request in plain words; no Job', async () => {
  const k = kit();
  const cases: [string, RegExp][] = [
    ['content=', /1 to 256 bytes/],
    [`content=${'x'.repeat(257)}`, /1 to 256 bytes/],
    [`content=${encodeURIComponent('é'.repeat(129))}`, /1 to 256 bytes/],
    ['content=a%0Ab', /line break/],
    ['content=a%0Db', /line break/],
    ['content=a%00b', /NUL/],
    ['content=ab&q=a', /\?q= needs at least 2/],
    ['content=ab&limit=0', /limit/],
    ['content=ab&limit=1001', /limit/],
  ];
  for (const [qs, msg] of cases) {
    const r = await k.call('GET', `/api/v1/servers/survival/files/search?${qs}`);
    assert.equal(r.status, 400, `${qs}: ${r.text}`);
    assert.equal(envelopeOf(r).code, 'bad_request', qs);
    assert.match(envelopeOf(r).message, msg, qs);
  }
  // Neither q nor content: the plain name-search message, naming both.
  assert.match(envelopeOf(await k.call('GET', '/api/v1/servers/survival/files/search')).message, /\?q= needs at least 2 characters \(or give \?content=/);
  assert.equal(k.calls.length, 0);
  assert.equal((await k.call('GET', `/api/v1/servers/survival/files/search?content=${'x'.repeat(256)}`)).status, 200);
  assert.equal((await k.call('GET', '/api/v1/servers/survival/files/search?content=a')).status, 200);
});

test('with content, a browse session answers the content query (as text); a report of another shape is a 500, not a guess', async () => {
  const k = kit();
  const asked: unknown[] = [];
  let answer: string | undefined = JSON.stringify({ report: contentAnswer });
  k.deps.browse = {
    run: async (_t, op, path, _signal, _early, query) => {
      asked.push({ op, path, query });
      return answer;
    },
  };
  const r = await k.call('GET', '/api/v1/servers/survival/files/search?path=world&content=needle&limit=5');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.matches, [hit]);
  assert.deepEqual(asked, [{ op: 'search', path: 'world', query: { text: 'needle', limit: 5 } }]);
  assert.equal(k.calls.length, 0, 'no one-shot Job');
  answer = JSON.stringify({ matches: [level], scanned: 1 });
  assert.equal((await k.call('GET', '/api/v1/servers/survival/files/search?content=needle')).status, 500);
});

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { FileEditError, ReadDamagedError } from '../../lib/files/errors.ts';
import { NotStoppedError, NoWorldVolumeError, ServerNotFoundError } from '../../lib/maintenance/errors.ts';
import { envelopeOf, FakeGates, fakeEditor, RUNNING_SERVER, realGates, routeKit } from '../../lib/testing/route-kit.ts';
import { filesRead } from './app.ts';

function kit(read: () => unknown = () => ({ content: Buffer.from('motd=hi\n'), sha256: 'd'.repeat(64), contentSha256: 'c'.repeat(64) })) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, { read });
  return { ...routeKit(filesRead, { gates, editor: ed.editor }), calls: ed.calls };
}

test('a read takes no lock, answers base64 content with both hashes, and is not audited', async () => {
  const k = kit();
  const r = await k.call('GET', '/api/v1/servers/survival/file?path=server.properties');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'server.properties', content: Buffer.from('motd=hi\n').toString('base64'), sha256: 'd'.repeat(64), content_sha256: 'c'.repeat(64) });
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'read', path: 'server.properties' } }]);
  assert.equal(k.gates.ran.length, 0);
  assert.equal(k.calls[0]!.locked, false);
  assert.equal(k.audits().length, 0);
});

test('a running server is read by a Job pinned to its node, with no lock; RWOP is 409 volume_exclusive; off, 409 not_stopped', async () => {
  const k = kit();
  const running = realGates(RUNNING_SERVER);
  k.deps.gates = running.gates;
  const r = await k.call('GET', '/api/v1/servers/survival/file?path=server.properties');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.content, Buffer.from('motd=hi\n').toString('base64'));
  assert.deepEqual(k.calls[0]!.args[0], { server: 'survival', world: { claim: 'world-survival-0', node: 'node-b' }, worldState: 'running' });
  assert.equal(k.calls[0]!.locked, false);
  assert.equal(
    running.api.calls.some((c) => c.startsWith('patch')),
    false,
    'no lock',
  );
  k.deps.gates = realGates(RUNNING_SERVER, { modes: ['ReadWriteOncePod'] }).gates;
  assert.equal(envelopeOf(await k.call('GET', '/api/v1/servers/survival/file?path=a')).code, 'volume_exclusive');
  k.deps.gates = realGates(RUNNING_SERVER, { readWhileRunning: false }).gates;
  assert.equal(envelopeOf(await k.call('GET', '/api/v1/servers/survival/file?path=a')).code, 'not_stopped');
  assert.equal(k.calls.length, 1, 'no Job for a refused read');
});

test('gate refusals: 404 unknown server, 409 not_stopped, 409 no_world_volume; no Job', async () => {
  for (const [err, status, code] of [
    [new ServerNotFoundError('survival'), 404, 'not_found'],
    [new NotStoppedError(), 409, 'not_stopped'],
    [new NoWorldVolumeError(), 409, 'no_world_volume'],
  ] as const) {
    const k = kit();
    k.gates.enterError = err;
    const r = await k.call('GET', '/api/v1/servers/survival/file?path=a');
    assert.equal(r.status, status);
    assert.equal(envelopeOf(r).code, code);
    assert.equal(k.calls.length, 0);
  }
});

test('an unknown server is 404 before a missing path is 400, as the gates come first', async () => {
  const k = kit();
  k.gates.enterError = new ServerNotFoundError('survival');
  assert.equal((await k.call('GET', '/api/v1/servers/survival/file')).status, 404);
  const k2 = kit();
  const r = await k2.call('GET', '/api/v1/servers/survival/file');
  assert.equal(r.status, 400);
  assert.deepEqual(envelopeOf(r), { code: 'bad_request', message: 'the ?path= query parameter is required' });
  assert.equal(k2.calls.length, 0);
});

test('a missing file is 404 not_found; damaged bytes are 502 read_damaged', async () => {
  const missing = kit(() => {
    throw new FileEditError('not_found', 'a does not exist');
  });
  const r = await missing.call('GET', '/api/v1/servers/survival/file?path=a');
  assert.equal(r.status, 404);
  assert.equal(envelopeOf(r).code, 'not_found');
  const damaged = kit(() => {
    throw new ReadDamagedError();
  });
  const d = await damaged.call('GET', '/api/v1/servers/survival/file?path=a');
  assert.equal(d.status, 502);
  assert.equal(envelopeOf(d).code, 'read_damaged');
});

test('with a browse session the read comes from it, checked like a Job result; without an answer, from the one-shot Job', async () => {
  const k = kit();
  const bytes = Buffer.from('motd=session\n');
  const sha = createHash('sha256').update(bytes).digest('hex');
  let answer: string | undefined = JSON.stringify({ content: bytes.toString('base64'), sha256: 'e'.repeat(64), content_sha256: sha });
  const asked: string[] = [];
  k.deps.browse = {
    run: async (_t, op, path) => {
      asked.push(`${op} ${path}`);
      return answer;
    },
  };
  const r = await k.call('GET', '/api/v1/servers/survival/file?path=server.properties');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'server.properties', content: bytes.toString('base64'), sha256: 'e'.repeat(64), content_sha256: sha });
  assert.deepEqual(asked, ['read server.properties']);
  assert.equal(k.calls.length, 0);
  answer = JSON.stringify({ content: bytes.toString('base64'), sha256: 'e'.repeat(64), content_sha256: 'f'.repeat(64) });
  const damaged = await k.call('GET', '/api/v1/servers/survival/file?path=server.properties');
  assert.equal(damaged.status, 502);
  assert.equal(envelopeOf(damaged).code, 'read_damaged');
  answer = JSON.stringify({ code: 'bad_path', error: 'config/paper-global.yml holds the forwarding secret' });
  assert.equal((await k.call('GET', '/api/v1/servers/survival/file?path=config/paper-global.yml')).status, 400);
  answer = undefined;
  const fallback = await k.call('GET', '/api/v1/servers/survival/file?path=server.properties');
  assert.equal(fallback.body.content, Buffer.from('motd=hi\n').toString('base64'));
  assert.equal(k.calls.length, 1);
});

test('the early session call starts before the gates answer, is handed to the session after them, and is cancelled on a refusal', async () => {
  const k = kit();
  const bytes = Buffer.from('motd=early\n');
  const sha = createHash('sha256').update(bytes).digest('hex');
  const events: string[] = [];
  const token = { cancel: () => events.push('cancel') };
  const gates = k.gates as FakeGates & { enter: FakeGates['enter'] };
  const enter = gates.enter.bind(gates);
  gates.enter = async (server, access) => {
    events.push(`gates ${server}`);
    return enter(server, access);
  };
  k.deps.browse = {
    early: (server, op, path) => {
      events.push(`early ${server} ${op} ${path}`);
      return token;
    },
    run: async (_t, op, path, _signal, early) => {
      events.push(`run ${op} ${path} ${early === token ? 'with' : 'without'} early`);
      return JSON.stringify({ content: bytes.toString('base64'), sha256: sha, content_sha256: sha });
    },
  };
  const r = await k.call('GET', '/api/v1/servers/survival/file?path=server.properties');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(events, ['early survival read server.properties', 'gates survival', 'run read server.properties with early']);
  events.length = 0;
  k.gates.enterError = new NotStoppedError();
  const refused = await k.call('GET', '/api/v1/servers/survival/file?path=server.properties');
  assert.equal(envelopeOf(refused).code, 'not_stopped');
  assert.deepEqual(events, ['early survival read server.properties', 'gates survival', 'cancel']);
  // A request that is malformed before the gates makes no early call at all.
  events.length = 0;
  k.gates.enterError = undefined;
  assert.equal((await k.call('GET', '/api/v1/servers/survival/file')).status, 400);
  assert.equal((await k.call('GET', '/api/v1/servers/Bad_Name/file?path=a')).status, 400);
  assert.deepEqual(
    events.filter((e) => e.startsWith('early')),
    [],
  );
});

test('decompress=true runs the read op one-shot with the flag, and answers truncated; any other value is a plain read', async () => {
  const text = Buffer.from('[12:00:00] Done\n');
  const digest = createHash('sha256').update(text).digest('hex');
  const gates = new FakeGates();
  const ed = fakeEditor(gates, {
    run: () => ({ content: text.toString('base64'), sha256: digest, content_sha256: digest, truncated: true }),
    read: () => ({ content: Buffer.from('raw'), sha256: 'd'.repeat(64), contentSha256: 'c'.repeat(64) }),
  });
  const k = routeKit(filesRead, { gates, editor: ed.editor });
  const r = await k.call('GET', '/api/v1/servers/survival/file?path=logs%2Fold.log.gz&decompress=true');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'logs/old.log.gz', content: text.toString('base64'), sha256: digest, content_sha256: digest, truncated: true });
  assert.deepEqual(ed.calls[0]!.args.slice(1, 4), ['read', 'logs/old.log.gz', { decompress: true }]);
  for (const other of ['1', 'TRUE', 'false', '']) {
    const p = await k.call('GET', `/api/v1/servers/survival/file?path=a.gz&decompress=${other}`);
    assert.equal(p.status, 200, p.text);
    assert.equal(p.body.truncated, undefined, `decompress=${other} is a plain read`);
  }
  assert.deepEqual(
    ed.calls.map((c) => c.method),
    ['run', 'read', 'read', 'read', 'read'],
  );
  const notGzip = routeKit(filesRead, {
    gates: new FakeGates(),
    editor: fakeEditor(new FakeGates(), {
      run: () => ({ code: 'gzip_invalid', error: 'a.gz is not gzip-compressed; read it without decompress=true' }),
    }).editor,
  });
  const g = await notGzip.call('GET', '/api/v1/servers/survival/file?path=a.gz&decompress=true');
  assert.equal(g.status, 400);
  assert.equal(envelopeOf(g).code, 'gzip_invalid');
  assert.match(envelopeOf(g).message, /a\.gz is not gzip-compressed/);
});

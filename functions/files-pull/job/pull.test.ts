import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import type { Request } from '../../../job/pull/connect.ts';
import type { ExecuteOptions, OpCall, OpRequestOf } from '../../../job/runtime/types.ts';
import { makeWorld, sha256, snapshot, tree } from '../../../job/testing/world.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import { newOpId, pulled } from './pull.test-kit.ts';
import { stagingName } from './pull-staging.ts';

/** A loopback origin whose routes the tests define; it counts the requests it got. */
async function origin(routes: Record<string, (req: http.IncomingMessage, res: http.ServerResponse) => void>) {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    const route = routes[(req.url ?? '').split('?')[0]];
    if (!route) {
      res.writeHead(404).end('no');
      return;
    }
    route(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, hits };
}

const ALLOW = { FELIS_PULL_ALLOW: '127.0.0.1' };
const body = Buffer.alloc(300_000, 7).fill('abc', 0, 3);

function pullReq(url: string, folder = 'config', extra: Partial<OpRequestOf<'pull'>> & { env?: Record<string, string> } = {}): OpCall {
  const { env, ...rest } = extra;
  return { op: 'pull', path: folder, pull: { url, env: { ...ALLOW, ...env } }, ...rest };
}

const noWorkingFiles = (root: string) =>
  assert.deepEqual(
    tree(root).filter((p) => /\.felis-edit-[0-9a-f]{12}/.test(p)),
    [],
  );

test('a pull lands under the URL path name, fsynced, chowned, with its bytes and progress', async () => {
  const o = await origin({ '/mods/Some%20Mod.jar': (_q, res) => res.writeHead(200, { 'content-length': body.length }).end(body) });
  const w = makeWorld();
  const chowned: string[] = [];
  const lines: string[] = [];
  const r = await pulled(w, pullReq(`${o.base}/mods/Some%20Mod.jar?token=x`), { chown: (p) => void chowned.push(String(p)), progress: (l) => void lines.push(l) });
  assert.deepEqual(r, { files: 1, bytes: body.length, to: 'config/Some Mod.jar' });
  assert.equal(sha256(fs.readFileSync(w.p('config/Some Mod.jar'))), sha256(body));
  assert.equal(chowned.length, 1);
  assert.match(lines.at(-1)!, new RegExp(`"done":${body.length},"total":${body.length}`));
  noWorkingFiles(w.root);
});

test('the name: Content-Disposition filename* before filename, base name only; a given name wins', async () => {
  const o = await origin({
    '/dl': (_q, res) => res.writeHead(200, { 'content-disposition': `attachment; filename="plain.zip"; filename*=UTF-8''%C3%A9t%C3%A9.zip` }).end('x'),
    '/plain': (_q, res) => res.writeHead(200, { 'content-disposition': 'attachment; filename="../../../escape.txt"' }).end('y'),
    '/dir/': (_q, res) => res.writeHead(200).end('z'),
  });
  const w = makeWorld();
  assert.equal((await pulled(w, pullReq(`${o.base}/dl`))).to, 'config/été.zip');
  assert.equal((await pulled(w, pullReq(`${o.base}/plain`, ''))).to, 'escape.txt');
  assert.equal(fs.existsSync(w.p('escape.txt')), true);
  assert.equal(fs.existsSync(`${w.base}/escape.txt`), false);
  const unnamed = await pulled(w, pullReq(`${o.base}/dir/`));
  assert.equal(unnamed.code, 'bad_path');
  assert.match(unnamed.error!, /names no file/);
  assert.equal((await pulled(w, pullReq(`${o.base}/dir/`, 'config', { to: 'given.bin' }))).to, 'config/given.bin');
  noWorkingFiles(w.root);
});

test('names it must not create: an existing file (checked before connecting), a working name, the withheld file, a slash', async () => {
  const o = await origin({
    '/f': (_q, res) => res.writeHead(200).end('new'),
    '/secret': (_q, res) => res.writeHead(200, { 'content-disposition': 'attachment; filename=paper-global.yml' }).end('evil'),
    '/work': (_q, res) => res.writeHead(200, { 'content-disposition': 'attachment; filename=.felis-edit-0123456789ab' }).end('w'),
  });
  const w = makeWorld();
  const before = snapshot(w.root);
  const exists = await pulled(w, pullReq(`${o.base}/f`, 'config', { to: 'paper.yml' }));
  assert.equal(exists.code, 'exists');
  assert.deepEqual(o.hits, [], 'an existing given name is refused before any request');
  const refused: [why: string, req: ReturnType<typeof pullReq>, code: string][] = [
    ['a given name with a slash', pullReq(`${o.base}/f`, 'config', { to: 'a/b' }), 'bad_name'],
    ['a given name with a bidirectional control', pullReq(`${o.base}/f`, 'config', { to: 'evil\u202egpj.jar' }), 'bad_name'],
    ['the withheld file, named by the server', pullReq(`${o.base}/secret`), 'bad_path'],
    ['an editor working name, named by the server', pullReq(`${o.base}/work`), 'bad_name'],
    ['a folder that is a file', pullReq(`${o.base}/f`, 'server.properties'), 'bad_path'],
    ['a folder that does not exist', pullReq(`${o.base}/f`, 'nope'), 'not_found'],
  ];
  for (const [why, req, code] of refused) assert.equal((await pulled(w, req)).code, code, why);
  assert.deepEqual(snapshot(w.root), before);
});

test("a server's name is held to the name rule: not UTF-8, a control or a bidirectional control is bad_name, nothing placed; UTF-8 bytes are UTF-8", async () => {
  // Node sends a header's characters as latin1 bytes: this is how a server's raw bytes are written
  // (with a Buffer body: after a string one Node may send the head in the body's encoding instead).
  const raw = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
  const named = (disposition: string) => (_q: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(200, { 'content-disposition': disposition, 'content-length': 1 }).end(Buffer.from('x'));
  const o = await origin({
    '/latin1.jar': named('attachment; filename="caf\xe9.jar"'),
    '/ext.jar': named('attachment; filename="fallback.jar"; filename*=UTF-8\'\'caf%E9.jar'),
    '/bidi.jar': named(`attachment; filename="${raw('evil\u202egpj.jar')}"`),
    '/bidi-ext.jar': named("attachment; filename*=UTF-8''evil%E2%80%AEgpj.jar"),
    '/bell.jar': named("attachment; filename*=UTF-8''ring%07.jar"),
    '/utf8': named(`attachment; filename="${raw('été.jar')}"`),
    '/bare.jar': named('attachment'),
  });
  const w = makeWorld();
  const before = snapshot(w.root);
  for (const [path, why] of [
    ['/latin1.jar', /the file name its Content-Disposition gives is not valid UTF-8; nothing was placed/],
    ['/ext.jar', /the file name its Content-Disposition gives is not valid UTF-8 once percent-decoded/],
    ['/bidi.jar', /"evil<U\+202E>gpj\.jar" holds a bidirectional control character \(U\+202E\)/],
    ['/bidi-ext.jar', /bidirectional control character \(U\+202E\)/],
    ['/bell.jar', /"ring<U\+0007>\.jar" holds a control character \(U\+0007\)/],
  ] as const) {
    const r = await pulled(w, pullReq(`${o.base}${path}`));
    assert.equal(r.code, 'bad_name', `${path}: ${JSON.stringify(r)}`);
    assert.match(r.error!, why, path);
  }
  assert.deepEqual(snapshot(w.root), before, "nothing placed, not even under the URL's name");
  noWorkingFiles(w.root);
  assert.equal((await pulled(w, pullReq(`${o.base}/utf8`))).to, 'config/été.jar');
  assert.equal((await pulled(w, pullReq(`${o.base}/bare.jar`))).to, 'config/bare.jar', 'a disposition without a name: the URL names it');
});

/** An answer of 5000 bytes, once with its Content-Length and once without one (chunked). */
const fiveThousand = {
  '/big': (_q: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(200, { 'content-length': 5000 }).end(Buffer.alloc(5000)),
  '/chunked': (_q: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(200);
    for (let i = 0; i < 10; i++) res.write(Buffer.alloc(1000));
    res.end();
  },
};

/** The bounds a pull is held to: each refuses on Content-Length before a byte is written, and while streaming without one. */
const bounds: { bound: string; code: string; extra: Parameters<typeof pullReq>[2]; opts: ExecuteOptions; byLength: (r: Result) => void }[] = [
  {
    bound: 'FELIS_PULL_MAX_BYTES',
    code: 'too_large',
    extra: { env: { FELIS_PULL_MAX_BYTES: '4096' } },
    opts: {},
    byLength: (r) => assert.match(r.error!, /5000 bytes/),
  },
  {
    bound: "the volume's free space",
    code: 'no_space',
    extra: {},
    opts: { statfs: () => ({ bavail: 3, bsize: 1024 }) },
    byLength: (r) => assert.deepEqual([r.need, r.avail], [5000, 3072]),
  },
];
for (const b of bounds) {
  test(`never more than ${b.bound}: refused (${b.code}) on Content-Length first, then while streaming; nothing left`, async () => {
    const o = await origin(fiveThousand);
    const w = makeWorld();
    const before = snapshot(w.root);
    const byLength = await pulled(w, pullReq(`${o.base}/big`, 'config', b.extra), b.opts);
    assert.equal(byLength.code, b.code);
    b.byLength(byLength);
    assert.equal((await pulled(w, pullReq(`${o.base}/chunked`, 'config', b.extra), b.opts)).code, b.code);
    assert.deepEqual(snapshot(w.root), before);
  });
}

test('upstream errors and a stalled transfer are pull_failed, nothing left', async () => {
  const o = await origin({
    '/500': (_q, res) => res.writeHead(500).end('boom'),
    '/stall': (_q, res) => {
      res.writeHead(200, { 'content-length': 100 });
      res.write('only a little');
    },
    '/short': (_q, res) => {
      res.writeHead(200, { 'content-length': 100 });
      res.end('short');
      res.socket?.destroy();
    },
  });
  const w = makeWorld();
  const before = snapshot(w.root);
  const e404 = await pulled(w, pullReq(`${o.base}/missing`));
  assert.deepEqual([e404.code, /HTTP 404/.test(e404.error!)], ['pull_failed', true]);
  assert.equal((await pulled(w, pullReq(`${o.base}/500`))).code, 'pull_failed');
  const t0 = performance.now();
  const stall = await pulled(w, pullReq(`${o.base}/stall`, 'config', { env: { FELIS_PULL_IDLE_TIMEOUT_SECONDS: '1' } }));
  assert.equal(stall.code, 'pull_failed');
  assert.match(stall.error!, /sent nothing for 1 s/);
  assert.ok(performance.now() - t0 < 5000);
  assert.equal((await pulled(w, pullReq(`${o.base}/short`))).code, 'pull_failed');
  assert.deepEqual(snapshot(w.root), before);
});

test('redirects: followed by hand up to 5, the sixth refused; a redirect to 169.254.169.254 never connects', async () => {
  const chain = (n: number) => (_q: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(302, { location: n === 0 ? '/file.bin' : `/r${n - 1}` }).end();
  const routes: Record<string, ReturnType<typeof chain>> = { '/file.bin': (_q, res) => res.writeHead(200).end('landed') };
  for (let i = 0; i < 6; i++) routes[`/r${i}`] = chain(i);
  routes['/meta'] = (_q, res) => res.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
  routes['/loop6'] = (_q, res) => res.writeHead(307, { location: 'http://[::1]/' }).end();
  const o = await origin(routes);
  const w = makeWorld();
  // r4 → r3 → r2 → r1 → r0 → file.bin: five redirects.
  const ok = await pulled(w, pullReq(`${o.base}/r4`));
  assert.equal(ok.to, 'config/file.bin');
  const tooMany = await pulled(w, pullReq(`${o.base}/r5`, ''));
  assert.deepEqual([tooMany.code, tooMany.error], ['pull_failed', 'more than 5 redirects']);

  const connected: string[] = [];
  const http_ = await import('node:http');
  const spy: Request = (tls, options) => {
    connected.push(String(options.host));
    assert.equal(tls, false);
    return http_.request(options);
  };
  const before = snapshot(w.root);
  for (const path of ['/meta', '/loop6']) {
    const r = await pulled(w, pullReq(`${o.base}${path}`), { pullConnect: { connect: { request: spy } } });
    assert.equal(r.code, 'pull_refused', path);
  }
  assert.deepEqual(connected, ['127.0.0.1', '127.0.0.1'], 'only the loopback origin was connected to');
  assert.deepEqual(snapshot(w.root), before);
});

test('loopback without the allow rule is refused before any request', async () => {
  const o = await origin({ '/f': (_q, res) => res.writeHead(200).end('x') });
  const w = makeWorld();
  const r = await pulled(w, { op: 'pull', path: 'config', pull: { url: `${o.base}/f`, env: {} } });
  assert.equal(r.code, 'pull_refused');
  assert.match(r.error!, /127\.0\.0\.1.*loopback/);
  assert.deepEqual(o.hits, []);
});

test('cancel: the pull ends cancelled mid-transfer and leaves nothing behind', async () => {
  let sent = 0;
  const o = await origin({
    '/slow': (_q, res) => {
      res.writeHead(200, { 'content-length': 10_000_000 });
      const t = setInterval(() => {
        res.write(Buffer.alloc(10_000));
        sent += 10_000;
      }, 5);
      res.on('close', () => clearInterval(t));
    },
  });
  const w = makeWorld();
  const before = snapshot(w.root);
  const cancel = new AbortController();
  const opId = newOpId();
  const running = w.run({ op: 'pull', path: 'config', pull: { url: `${o.base}/slow`, env: ALLOW, cancel: cancel.signal } }, { opId });
  while (sent < 50_000) await new Promise((r) => setTimeout(r, 5));
  // Its staging exists while it runs.
  assert.equal(tree(w.root).includes(`${stagingName(opId)}/data`), true);
  cancel.abort();
  const r = await running;
  assert.equal(r.code, 'pull_cancelled');
  assert.deepEqual(snapshot(w.root), before);
});

test('a pull stages without placing: its staging at the root holds the bytes and its record, hidden from a listing; the folder is untouched', async () => {
  const o = await origin({ '/x.jar': (_q, res) => res.writeHead(200, { 'content-length': body.length }).end(body) });
  const w = makeWorld();
  const before = snapshot(w.p('config'));
  const opId = newOpId();
  const now = Date.parse('2026-12-07T12:00:00Z');
  const r = await w.run(pullReq(`${o.base}/x.jar`, 'config', { env: { FELIS_PULL_KEEP_SECONDS: '600' } }), { opId, now: () => now });
  assert.deepEqual(r, { staged: true, bytes: body.length, to: 'config/x.jar' });
  assert.deepEqual(snapshot(w.p('config')), before, 'nothing placed in the folder');
  const staging = w.p(stagingName(opId));
  assert.equal(sha256(fs.readFileSync(`${staging}/data`)), sha256(body));
  assert.deepEqual(JSON.parse(fs.readFileSync(`${staging}/pull.json`, 'utf8')), { v: 1, op: opId, path: 'config', name: 'x.jar', expires: now + 600_000 });
  assert.equal(fs.statSync(staging).mode & 0o777, 0o700);
  const listed = await w.run({ op: 'list', path: '' });
  assert.equal(
    listed.entries!.some((e) => e.name.startsWith('.felis-edit-')),
    false,
    'a listing skips it',
  );
  // Without its op id a pull could never be placed: it does not run.
  await assert.rejects(w.run(pullReq(`${o.base}/x.jar`, 'config', { to: 'y.jar' })), /op id/);
});

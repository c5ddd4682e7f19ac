import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import type http from 'node:http';
import { request } from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import { jobToken, tokenDigest } from '../../lib/protocol/job-token.ts';
import { RESULT_PREFIX } from '../../lib/protocol/result.ts';
import { runCli } from '../cli.ts';
import { makeWorld, OUTSIDE_TEXT, SECRET_TEXT, sha256 } from '../testing/world.ts';
import { parseExportFlags } from './run.ts';
import { drained, watchDelivery } from './send.ts';
import type { ExportServing } from './server.ts';

const KEY = Buffer.alloc(32, 9);
const JOB = 'export-survival-0123456789abcdef';
const TOKEN = jobToken(KEY, JOB);

interface Answer {
  status: number;
  body: Buffer;
  headers: Record<string, string | string[] | undefined>;
  /** The body ended cleanly (not cut off). */
  complete: boolean;
}

function call(s: ExportServing, opts: { token?: string | null; path?: string; method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== null) headers.authorization = `Bearer ${opts.token ?? TOKEN}`;
  return new Promise((resolve, reject) => {
    const req = request({ host: s.address.address, port: s.address.port, path: opts.path ?? '/download', method: opts.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let complete = false;
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (complete = true));
      res.on('close', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks), headers: res.headers, complete: complete && !res.errored }));
      res.on('error', () => {});
    });
    req.on('error', reject);
    req.end();
  });
}

interface Run {
  serving: ExportServing;
  /** Exit code, stdout and stderr once the program ends. */
  done: Promise<{ code: number; out: string; err: string }>;
}

/** Runs `felis export ...` on 127.0.0.1, port 0, and hands back the server once it listens. */
function runExportCli(root: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const done = runCli(
      ['export', '--mode', 'files', '--server', 'survival', '--worlds-root', root, ...args],
      { FELIS_POD_IP: '127.0.0.1', FELIS_SERVE_PORT: '0', FELIS_EXPORT_TOKEN_SHA256: tokenDigest(TOKEN), ...env },
      { stdout: (t) => void (out += t), stderr: (t) => void (err += t) },
      { onExportListening: (serving) => resolve({ serving, done: done.then((code) => ({ code, out, err })) }) },
    );
    done.then((code) => reject(new Error(`exited ${code} before listening: ${err}`)), reject);
  });
}

const resultOf = (out: string) => JSON.parse(out.slice(out.indexOf(RESULT_PREFIX) + RESULT_PREFIX.length).trim());

test('a single file: Content-Length, the exact bytes, then the program exits with its totals', async () => {
  const w = makeWorld();
  const data = Buffer.alloc(3 << 20);
  for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
  fs.mkdirSync(w.p('plugins'));
  fs.writeFileSync(w.p('plugins/big.jar'), data);
  const r = await runExportCli(w.root, ['--path', 'plugins/big.jar']);
  const a = await call(r.serving);
  assert.equal(a.status, 200);
  assert.equal(a.headers['content-length'], String(data.length));
  assert.equal(a.headers['content-type'], 'application/octet-stream');
  assert.equal(sha256(a.body), sha256(data));
  const end = await r.done;
  assert.equal(end.code, 0, end.err);
  assert.deepEqual(resultOf(end.out), { files: 1, bytes: data.length });
});

test('an empty file: Content-Length 0, an empty body, and the program exits with one file', async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('empty.txt'), '');
  const r = await runExportCli(w.root, ['--path', 'empty.txt']);
  const a = await call(r.serving);
  assert.equal(a.status, 200);
  assert.equal(a.headers['content-length'], '0');
  assert.equal(a.body.length, 0);
  const end = await r.done;
  assert.equal(end.code, 0, end.err);
  assert.deepEqual(resultOf(end.out), { files: 1 });
});

test('a folder as a zip that passes unzip -t, without the forwarding secret, with server.properties redacted and no link followed', async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('config/notes.txt'), 'notes\n');
  fs.symlinkSync(path.join(w.outside, 'secret.txt'), w.p('config/outside-link'));
  fs.linkSync(w.p('server.properties'), w.p('config/props-hardlink'));
  fs.linkSync(w.p('config/paper-global.yml'), w.p('config/secret-hardlink'));
  const r = await runExportCli(w.root, ['--path', 'config', '--dir']);
  const a = await call(r.serving);
  assert.equal(a.status, 200);
  assert.equal(a.headers['content-type'], 'application/zip');
  assert.equal(a.headers['content-length'], undefined);
  assert.ok(a.complete);
  const zip = path.join(w.base, 'out.zip');
  fs.writeFileSync(zip, a.body);
  execFileSync('unzip', ['-t', zip]);
  const names = execFileSync('unzip', ['-Z1', zip]).toString().trim().split('\n').sort();
  assert.deepEqual(names, ['config/', 'config/notes.txt', 'config/paper.yml', 'config/props-hardlink']);
  const props = execFileSync('unzip', ['-p', zip, 'config/props-hardlink']).toString();
  assert.ok(!props.includes('hunter2') && props.includes('rcon.password=<redacted by felis>'), props);
  assert.ok(!a.body.includes(Buffer.from(SECRET_TEXT.trim())) && !a.body.includes(Buffer.from(OUTSIDE_TEXT.trim())));
  const end = await r.done;
  assert.equal(end.code, 0, end.err);
  assert.equal(resultOf(end.out).files, 3);
});

test('server.properties alone is sent redacted, sized as redacted', async () => {
  const w = makeWorld();
  const r = await runExportCli(w.root, ['--path', 'server.properties']);
  const a = await call(r.serving);
  assert.equal(a.status, 200);
  assert.equal(a.body.toString(), 'motd=hi\nrcon.password=<redacted by felis>\nserver-port=25565\n');
  assert.equal(a.headers['content-length'], String(a.body.length));
  assert.equal((await r.done).code, 0);
});

test('refusals come back as 422 with the code: the secret by any path, a link out, the root, a kind mismatch, a FIFO, a missing file', async () => {
  const w = makeWorld();
  fs.symlinkSync('config/paper-global.yml', w.p('innocent.yml'));
  fs.linkSync(w.p('config/paper-global.yml'), w.p('hard.yml'));
  fs.symlinkSync(path.join(w.outside, 'secret.txt'), w.p('out.txt'));
  execFileSync('mkfifo', [w.p('pipe')]);
  fs.writeFileSync(w.p('config/.felis-edit-0123456789ab'), 'half-written');
  const cases: [string[], string][] = [
    [['--path', 'config/paper-global.yml'], 'bad_path'],
    [['--path', 'innocent.yml'], 'bad_path'],
    [['--path', 'hard.yml'], 'bad_path'],
    [['--path', 'out.txt'], 'bad_path'],
    [['--path', '.', '--dir'], 'bad_path'],
    [['--path', '../outside/secret.txt'], 'bad_path'],
    [['--path', 'config'], 'bad_path'],
    [['--path', 'server.properties', '--dir'], 'bad_path'],
    [['--path', 'pipe'], 'bad_path'],
    [['--path', 'nope.txt'], 'not_found'],
    [['--path', 'config/.felis-edit-0123456789ab'], 'not_found'],
  ];
  for (const [args, code] of cases) {
    const r = await runExportCli(w.root, args);
    const a = await call(r.serving);
    assert.equal(a.status, 422, `${args}: ${a.body}`);
    assert.equal(JSON.parse(a.body.toString()).code, code, `${args}: ${a.body}`);
    assert.ok(!a.body.includes(Buffer.from(SECRET_TEXT.trim())) && !a.body.includes(Buffer.from(OUTSIDE_TEXT.trim())));
    const end = await r.done;
    assert.equal(end.code, 0);
    assert.equal(resultOf(end.out).code, code);
  }
});

test("no token, a wrong one or another Job's token is refused, and does not spend the download", async () => {
  const w = makeWorld();
  const r = await runExportCli(w.root, ['--path', 'server.properties']);
  for (const token of [null, 'f'.repeat(64), jobToken(KEY, 'export-survival-fedcba9876543210'), tokenDigest(TOKEN)]) {
    const a = await call(r.serving, { token });
    assert.equal(a.status, 401);
    assert.equal(a.body.toString(), '{"error":"unauthorized"}');
  }
  assert.equal((await call(r.serving, { path: '/other' })).status, 404);
  assert.equal((await call(r.serving, { method: 'DELETE' })).status, 405);
  const ok = await call(r.serving);
  assert.equal(ok.status, 200);
  assert.equal((await r.done).code, 0);
});

test('nobody comes: it stops after the idle period and prints {}', async () => {
  const w = makeWorld();
  const started = Date.now();
  const r = await runExportCli(w.root, ['--path', 'server.properties'], { FELIS_EXPORT_IDLE_SECONDS: '1' });
  const end = await r.done;
  assert.equal(end.code, 0, end.err);
  assert.deepEqual(resultOf(end.out), {});
  assert.ok(Date.now() - started >= 900);
});

test('a receiver that goes away mid-folder stops the walk and the program', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('region'));
  const chunk = Buffer.alloc(1 << 20, 1);
  for (let i = 0; i < 64; i++) fs.writeFileSync(w.p(`region/r.${i}.bin`), chunk);
  const r = await runExportCli(w.root, ['--path', 'region', '--dir']);
  await new Promise<void>((resolve) => {
    const req = request({ host: r.serving.address.address, port: r.serving.address.port, path: '/download', headers: { authorization: `Bearer ${TOKEN}` }, agent: false }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', () => {});
    req.end();
  });
  const end = await r.done;
  assert.equal(end.code, 1);
  assert.match(end.err, /the download failed/);
});

test('a wrong invocation exits 2: Felis push mode, another mode, a missing path or token digest', async () => {
  const w = makeWorld();
  const io = { stdout: () => {}, stderr: () => {} };
  const env = { FELIS_POD_IP: '127.0.0.1', FELIS_EXPORT_TOKEN_SHA256: tokenDigest(TOKEN) };
  const base = ['export', '--server', 's', '--worlds-root', w.root];
  assert.equal(await runCli([...base, '--mode', 'files', '--path', 'a', '--target-url', 'http://x'], env, io), 2);
  assert.equal(await runCli([...base, '--mode', 'world', '--path', 'a'], env, io), 2);
  assert.equal(await runCli([...base, '--mode', 'files'], env, io), 2);
  assert.equal(await runCli([...base, '--mode', 'files', '--path', 'a'], { FELIS_POD_IP: '127.0.0.1' }, io), 2);
  assert.deepEqual(parseExportFlags(['--mode=files', '-path', 'p', '--dir=false', '--server', 's']), { mode: 'files', server: 's', path: 'p', worldsRoot: '/data', dir: false, targetUrl: '' });
  assert.throws(() => parseExportFlags(['--bogus', 'x']), /not defined/);
});

/**
 * Downloads from `serving` with a receiver that stops after its first chunk, runs `onStall`, waits
 * `ms`, then reads on: what arrived, and whether the body ended whole.
 */
function stallingDownload(serving: ExportServing, ms: number, onStall: () => void = () => {}): Promise<{ bytes: number; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: serving.address.address, port: serving.address.port, path: '/download', headers: { authorization: `Bearer ${TOKEN}` }, agent: false }, (res) => {
      let bytes = 0;
      let complete = false;
      res.once('data', (c: Buffer) => {
        bytes += c.length;
        res.pause();
        onStall();
        setTimeout(() => {
          res.on('data', (more: Buffer) => (bytes += more.length));
          res.resume();
        }, ms);
      });
      res.on('end', () => (complete = true));
      res.on('close', () => resolve({ bytes, complete }));
      res.on('error', () => {});
    });
    req.on('error', reject);
    req.end();
  });
}

test('a receiver slower than the disk still gets every byte: the program stops only once the last one is handed over', async () => {
  const w = makeWorld();
  // About what loopback socket buffers hold: the program has sent it all before the receiver reads on.
  const data = Buffer.alloc(6 << 20, 3);
  fs.writeFileSync(w.p('slow.bin'), data);
  const r = await runExportCli(w.root, ['--path', 'slow.bin']);
  // Stall well past the program's own close grace, then read the rest.
  const got = await stallingDownload(r.serving, 2_000);
  assert.deepEqual(got, { bytes: data.length, complete: true });
  const end = await r.done;
  assert.equal(end.code, 0, end.err);
});

test('a folder download spills its central directory into the scratch folder, leaves nothing there, and fails rather than fall back when it cannot', async () => {
  const w = makeWorld();
  for (let i = 0; i < 300; i++) fs.writeFileSync(w.p(`config/f${i}.txt`), `${i}\n`);
  const scratch = path.join(w.base, 'scratch');
  fs.mkdirSync(scratch);
  const r = await runExportCli(w.root, ['--path', 'config', '--dir'], { FELIS_SCRATCH_DIR: scratch });
  const a = await call(r.serving);
  assert.equal(a.status, 200);
  assert.ok(a.complete);
  const zip = path.join(w.base, 'spilled.zip');
  fs.writeFileSync(zip, a.body);
  execFileSync('unzip', ['-tq', zip]);
  const names = execFileSync('unzip', ['-Z1', zip]).toString().trim().split('\n');
  // The folder, paper.yml, the 300 files; the forwarding secret beside them is withheld.
  assert.equal(names.length, 302);
  assert.ok(names.includes('config/f299.txt') && !names.includes('config/paper-global.yml'));
  const end = await r.done;
  assert.equal(end.code, 0, end.err);
  assert.deepEqual(fs.readdirSync(scratch), []);

  // A scratch folder that is not there: the download is cut off and the program fails, so a
  // missing scratch volume shows instead of quietly growing the heap.
  const gone = await runExportCli(w.root, ['--path', 'config', '--dir'], { FELIS_SCRATCH_DIR: path.join(w.base, 'absent') });
  const b = await call(gone.serving).catch((e: Error) => e);
  assert.ok(b instanceof Error || !b.complete || b.status !== 200, 'not a whole download');
  const failed = await gone.done;
  assert.equal(failed.code, 1, failed.err);
  assert.match(failed.err, /ENOENT/);
});

test('delivery: finish, or a clean hang-up after the end was handed over, is delivered; a close before the end or after a reset is a cut-off', async () => {
  const fake = () => {
    const socket = new EventEmitter();
    const res = Object.assign(new EventEmitter(), { socket, writableEnded: false });
    return { res, socket, delivered: watchDelivery(res as unknown as http.ServerResponse) };
  };
  const finished = fake();
  finished.res.writableEnded = true;
  finished.res.emit('finish');
  finished.res.emit('close');
  await finished.delivered;

  // The receiver read to the end and hung up before this side's own 'finish'.
  const hungUp = fake();
  hungUp.res.writableEnded = true;
  hungUp.res.emit('close');
  await hungUp.delivered;

  const early = fake();
  early.res.emit('close');
  await assert.rejects(early.delivered, /went away/);

  const reset = fake();
  reset.res.writableEnded = true;
  reset.socket.emit('error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
  reset.res.emit('close');
  await assert.rejects(reset.delivered, /went away/);
});

test('waiting for room: a receiver that went away while a read was pending (its close already emitted) ends the wait at once', async () => {
  const within = (p: Promise<void>) =>
    Promise.race([
      p.then(
        () => 'drained',
        (e: Error) => e.message,
      ),
      new Promise((r) => setTimeout(() => r('still waiting'), 500)),
    ]);
  // Closed before the wait began: no 'drain' and no second 'close' will come.
  const closed = Object.assign(new EventEmitter(), { destroyed: true, closed: true });
  assert.equal(await within(drained(closed as unknown as http.ServerResponse, new AbortController().signal)), 'the receiver went away');
  // Open, but the download's own signal is aborted (the server's close handler ran first).
  const aborted = new AbortController();
  const open = Object.assign(new EventEmitter(), { destroyed: false, closed: false });
  const waiting = within(drained(open as unknown as http.ServerResponse, aborted.signal));
  aborted.abort(new Error('gone'));
  assert.equal(await waiting, 'the receiver went away');
  // And room to write again is a drain.
  const room = Object.assign(new EventEmitter(), { destroyed: false, closed: false });
  const draining = within(drained(room as unknown as http.ServerResponse, new AbortController().signal));
  room.emit('drain');
  assert.equal(await draining, 'drained');
  assert.equal(room.listenerCount('close'), 0, 'no listener left behind');
});

test('a file that shrinks while it is sent is cut off, never ended short, and the program says so', async () => {
  const w = makeWorld();
  // Far more than socket buffers hold, so most of it is still to be read when the file shrinks.
  fs.writeFileSync(w.p('shrinking.bin'), Buffer.alloc(64 << 20, 7));
  const r = await runExportCli(w.root, ['--path', 'shrinking.bin']);
  // The file loses most of its bytes while the rest is on its way.
  const got = await stallingDownload(r.serving, 200, () => fs.truncateSync(w.p('shrinking.bin'), 1 << 20));
  assert.equal(got.complete, false, 'the body is cut off');
  assert.ok(got.bytes < 64 << 20, `${got.bytes} bytes`);
  const end = await r.done;
  assert.equal(end.code, 1);
  assert.match(end.err, /shrank while it was sent/);
});

test('a file range: 206 with Content-Range, exactly those bytes, its ETag, and the result counts what was sent', async () => {
  const w = makeWorld();
  const data = Buffer.alloc((2 << 20) + 12345);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7 + (i >> 11)) & 0xff;
  fs.writeFileSync(w.p('big.bin'), data);
  // The whole file first: its ETag and Accept-Ranges.
  const r0 = await runExportCli(w.root, ['--path', 'big.bin']);
  const whole = await call(r0.serving);
  assert.equal(whole.status, 200);
  assert.equal(whole.headers['accept-ranges'], 'bytes');
  const etag = whole.headers.etag as string;
  assert.match(etag, /^"[^"]+"$/);
  assert.equal((await r0.done).code, 0);
  const cut = 1_234_567;
  for (const [h, start, end] of [
    [`bytes=${cut}-`, cut, data.length - 1],
    ['bytes=10-19', 10, 19],
    ['bytes=-100', data.length - 100, data.length - 1],
  ] as const) {
    const r = await runExportCli(w.root, ['--path', 'big.bin']);
    const a = await call(r.serving, { headers: { range: h, 'if-range': etag } });
    assert.equal(a.status, 206, h);
    assert.equal(a.headers['content-range'], `bytes ${start}-${end}/${data.length}`, h);
    assert.equal(a.headers['content-length'], String(end - start + 1), h);
    assert.equal(a.headers.etag, etag, h);
    assert.ok(a.complete, h);
    assert.equal(sha256(a.body), sha256(data.subarray(start, end + 1)), h);
    const done = await r.done;
    assert.equal(done.code, 0, done.err);
    assert.deepEqual(resultOf(done.out), { files: 1, bytes: end - start + 1 }, h);
  }
});

test('a file changed since its ETag: If-Range answers 200 with the whole new file; a Range alone is served under the new ETag', async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('a.bin'), Buffer.alloc(4096, 1));
  const r0 = await runExportCli(w.root, ['--path', 'a.bin']);
  const old = (await call(r0.serving)).headers.etag as string;
  await r0.done;
  // Rewritten in place, same size, same inode, mtime set back: still a new ETag (ctime moved).
  const st = fs.statSync(w.p('a.bin'));
  fs.writeFileSync(w.p('a.bin'), Buffer.alloc(4096, 2));
  fs.utimesSync(w.p('a.bin'), st.atime, st.mtime);
  const r = await runExportCli(w.root, ['--path', 'a.bin']);
  const a = await call(r.serving, { headers: { range: 'bytes=100-', 'if-range': old } });
  assert.equal(a.status, 200);
  assert.equal(a.headers['content-range'], undefined);
  assert.notEqual(a.headers.etag, old);
  assert.deepEqual(a.body, Buffer.alloc(4096, 2));
  assert.deepEqual(resultOf((await r.done).out), { files: 1, bytes: 4096 });
  // A date is no validator of ours: the whole file.
  const r2 = await runExportCli(w.root, ['--path', 'a.bin']);
  const b = await call(r2.serving, { headers: { range: 'bytes=100-', 'if-range': new Date(Date.now() + 86_400_000).toUTCString() } });
  assert.equal(b.status, 200);
  assert.equal(b.body.length, 4096);
  await r2.done;
  // Without If-Range the client asked for bytes of whatever the file is now; the new ETag says so.
  const r3 = await runExportCli(w.root, ['--path', 'a.bin']);
  const c = await call(r3.serving, { headers: { range: 'bytes=4000-' } });
  assert.equal(c.status, 206);
  assert.equal(c.headers.etag, a.headers.etag);
  assert.deepEqual(c.body, Buffer.alloc(96, 2));
  await r3.done;
});

test('an unsatisfiable range is 416 with bytes */size and nothing sent; a multi-range or malformed one is the whole file', async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('s.txt'), 'hello world\n');
  const r = await runExportCli(w.root, ['--path', 's.txt']);
  const a = await call(r.serving, { headers: { range: 'bytes=12-' } });
  assert.equal(a.status, 416);
  assert.equal(a.headers['content-range'], 'bytes */12');
  assert.equal(a.headers['accept-ranges'], 'bytes');
  assert.equal(a.body.length, 0);
  const done = await r.done;
  assert.equal(done.code, 0, done.err);
  assert.deepEqual(resultOf(done.out), {});
  for (const h of ['bytes=0-1,4-5', 'bytes=5-1', 'lines=1-2']) {
    const rr = await runExportCli(w.root, ['--path', 's.txt']);
    const b = await call(rr.serving, { headers: { range: h } });
    assert.equal(b.status, 200, h);
    assert.equal(b.body.toString(), 'hello world\n', h);
    await rr.done;
  }
});

test('a folder ignores Range and says Accept-Ranges: none; server.properties answers ranges over its redacted bytes', async () => {
  const w = makeWorld();
  const r = await runExportCli(w.root, ['--path', 'config', '--dir']);
  const a = await call(r.serving, { headers: { range: 'bytes=10-' } });
  assert.equal(a.status, 200);
  assert.equal(a.headers['accept-ranges'], 'none');
  assert.equal(a.headers['content-range'], undefined);
  assert.equal(a.headers.etag, undefined);
  assert.equal(a.body.subarray(0, 4).toString('hex'), '504b0304');
  await r.done;
  const redacted = 'motd=hi\nrcon.password=<redacted by felis>\nserver-port=25565\n';
  const r1 = await runExportCli(w.root, ['--path', 'server.properties']);
  const whole = await call(r1.serving);
  assert.equal(whole.headers['accept-ranges'], 'bytes');
  const etag = whole.headers.etag as string;
  await r1.done;
  const r2 = await runExportCli(w.root, ['--path', 'server.properties']);
  const p = await call(r2.serving, { headers: { range: 'bytes=8-', 'if-range': etag } });
  assert.equal(p.status, 206);
  assert.equal(p.body.toString(), redacted.slice(8));
  assert.equal(p.headers['content-range'], `bytes 8-${redacted.length - 1}/${redacted.length}`);
  assert.ok(!p.body.includes(Buffer.from('hunter2')));
  assert.deepEqual(resultOf((await r2.done).out), { files: 1, bytes: redacted.length - 8 });
});

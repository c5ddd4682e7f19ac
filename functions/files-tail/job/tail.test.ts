import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { parseFlags } from '../../../job/program/flags.ts';
import { makeWorld } from '../../../job/testing/world.ts';
import { TAIL_MAX_SCAN, type TailReport, tail } from '../op.ts';

const report = (r: { report?: unknown }) => r.report as TailReport;

test('the tail op answers the last lines of a log, its size, and the default of 100 lines', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('logs'));
  const lines = Array.from({ length: 300 }, (_, i) => `[12:00:${i}] [Server thread/INFO]: line ${i}`);
  fs.writeFileSync(w.p('logs/latest.log'), `${lines.join('\n')}\n`);
  const r = await w.run({ op: 'tail', path: 'logs/latest.log', lines: 3 });
  assert.equal(r.code, undefined, r.error);
  assert.deepEqual(report(r), { path: 'logs/latest.log', lines: lines.slice(-3), truncated: false, size: fs.statSync(w.p('logs/latest.log')).size });
  assert.deepEqual(report(await w.run({ op: 'tail', path: 'logs/latest.log' })).lines, lines.slice(-100));
});

test('a log longer than the scan: the lines found in its last 1 MiB, truncated', async () => {
  const w = makeWorld();
  const line = 'z'.repeat(1023);
  fs.writeFileSync(w.p('big.log'), `${line}\n`.repeat(2048)); // 2 MiB of 1 KiB lines
  const t = report(await w.run({ op: 'tail', path: 'big.log', lines: 5000 }));
  assert.equal(t.truncated, true);
  assert.equal(t.lines.length, TAIL_MAX_SCAN / 1024 - 1, 'the line cut by the scan edge is left out');
  assert.ok(t.lines.every((l) => l === line));
});

test('hostile paths: out of the world, through a link leading out, the withheld file, a folder, a FIFO', async () => {
  const w = makeWorld();
  fs.symlinkSync(path.join(w.outside, 'secret.txt'), w.p('out.log'));
  fs.symlinkSync('config/paper-global.yml', w.p('withheld.log'));
  for (const p of ['../outside/secret.txt', 'out.log', 'config/paper-global.yml', 'withheld.log', 'config', '/etc/passwd']) {
    const r = await w.run({ op: 'tail', path: p });
    assert.ok(r.code === 'bad_path' || r.code === 'not_found', `${p}: ${JSON.stringify(r)}`);
    assert.equal(r.report, undefined, p);
  }
  assert.equal((await w.run({ op: 'tail', path: 'nope.log' })).code, 'not_found');
});

test('server.properties is tailed from its redacted text', async () => {
  const w = makeWorld();
  const t = report(await w.run({ op: 'tail', path: 'server.properties', lines: 10 }));
  assert.ok(t.lines.length === 3 && !t.lines.some((l) => l.includes('hunter2')), JSON.stringify(t.lines));
});

test('the Job program takes -lines as the contract declares it, and refuses it out of bounds', () => {
  const flags = parseFlags(['--op', 'tail', '--path', 'logs/latest.log', '--lines', '5000']).flags;
  assert.deepEqual(tail.decode(flags), { lines: 5000 });
  assert.equal(tail.refuse(flags), undefined);
  assert.match(tail.refuse(parseFlags(['--op', 'tail', '--lines', '5001']).flags) ?? '', /-lines must be from 1 to 5000/);
  assert.match(tail.refuse(parseFlags(['--op', 'tail', '--lines', '0']).flags) ?? '', /-lines must be from 1 to 5000/);
});

test('tail --follow: refused before serving for what a tail refuses and for server.properties; else it serves the appended lines on the Pod address until its caller hangs up', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('logs'));
  fs.writeFileSync(w.p('logs/latest.log'), 'old\n');
  fs.symlinkSync(path.join(w.outside, 'secret.txt'), w.p('logs/out.log'));
  for (const p of ['logs/out.log', 'config/paper-global.yml', 'server.properties', '../outside/secret.txt']) {
    const r = await w.run({ op: 'tail', path: p, follow: true });
    assert.equal(r.code, 'bad_path', `${p}: ${JSON.stringify(r)}`);
  }
  assert.equal((await w.run({ op: 'tail', path: 'logs/latest.log', follow: true, from: 'nope' })).code, 'bad_path');

  const free = net.createServer();
  const port = await new Promise<number>((ok) => free.listen(0, '127.0.0.1', () => ok((free.address() as net.AddressInfo).port)));
  await new Promise((ok) => free.close(ok));
  const token = 'a-follow-token-0123456789';
  const saved = { ...process.env };
  Object.assign(process.env, { FELIS_POD_IP: '127.0.0.1', FELIS_SERVE_PORT: String(port), FELIS_SERVE_TOKEN_SHA256: createHash('sha256').update(token).digest('hex') });
  try {
    const run = w.run({ op: 'tail', path: 'logs/latest.log', follow: true });
    let res: http.IncomingMessage | undefined;
    for (let i = 0; i < 50 && !res; i++) {
      res = await new Promise<http.IncomingMessage | undefined>((ok) =>
        http.get({ host: '127.0.0.1', port, path: '/follow', headers: { authorization: `Bearer ${token}` } }, ok).once('error', () => setTimeout(() => ok(undefined), 20)),
      );
    }
    assert.equal(res?.statusCode, 200);
    fs.appendFileSync(w.p('logs/latest.log'), 'new\n');
    let text = '';
    for await (const chunk of res!) {
      text += chunk;
      if (text.split('\n').length > 2) break;
    }
    const ino = fs.statSync(w.p('logs/latest.log'), { bigint: true }).ino;
    const sent = text
      .split('\n')
      .slice(0, 2)
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      sent,
      [
        { id: `${ino}:4`, line: 'old' },
        { id: `${ino}:8`, line: 'new' },
      ],
      'the tail (its last lines, each with its id), then what was appended',
    );
    res!.destroy();
    const r = await run;
    assert.equal(r.code, undefined, r.error);
    assert.deepEqual(report(r), { path: 'logs/latest.log', lines: [], truncated: false, size: 4 });
  } finally {
    for (const k of ['FELIS_POD_IP', 'FELIS_SERVE_PORT', 'FELIS_SERVE_TOKEN_SHA256']) if (saved[k] === undefined) delete process.env[k];
  }
});

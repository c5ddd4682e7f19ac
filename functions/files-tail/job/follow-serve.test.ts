import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { FOLLOW_PATH, parseFrom, serveFollow } from './follow-serve.ts';

const TOKEN = 'follow-token-0123456789';
const env = { FELIS_POD_IP: '127.0.0.1', FELIS_SERVE_PORT: '0', FELIS_SERVE_TOKEN_SHA256: createHash('sha256').update(TOKEN).digest('hex') };

function logFile() {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-follow-serve-'));
  after(() => fs.rmSync(d, { recursive: true, force: true }));
  const f = path.join(d, 'latest.log');
  fs.writeFileSync(f, 'before\n');
  const file = {
    open: () => fs.openSync(f, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW),
    stat: () => {
      try {
        const st = fs.statSync(f, { bigint: true });
        return { ino: st.ino, size: st.size };
      } catch {
        return null;
      }
    },
  };
  return { d, f, file };
}

function start(o: Parameters<typeof serveFollow>[1]) {
  let port!: (p: number) => void;
  const listening = new Promise<number>((ok) => (port = ok));
  const done = serveFollow(env, { ...o, onListening: port });
  return { listening, done };
}

const get = (port: number, token: string, query = '') =>
  new Promise<http.IncomingMessage>((ok, no) => http.get({ host: '127.0.0.1', port, path: `${FOLLOW_PATH}${query}`, headers: { authorization: `Bearer ${token}` } }, ok).once('error', no));

/** Reads NDJSON objects from `res` until `until` says enough. */
async function readLines(res: http.IncomingMessage, until: (got: any[]) => boolean): Promise<any[]> {
  const got: any[] = [];
  let rest = '';
  for await (const chunk of res) {
    rest += chunk;
    let i: number;
    while ((i = rest.indexOf('\n')) >= 0) {
      got.push(JSON.parse(rest.slice(0, i)));
      rest = rest.slice(i + 1);
    }
    if (until(got)) return got;
  }
  return got;
}

test('the follow streams appended lines through a rotation, to the token bearer only, and the Job ends when the caller hangs up', async () => {
  const { d, f, file } = logFile();
  const s = start({ file, start: { offset: fs.statSync(f).size }, maxLine: 1024, idleMs: 10_000, pollMs: 20 });
  const port = await s.listening;
  const wrong = await get(port, 'not-the-token');
  assert.equal(wrong.statusCode, 401);
  wrong.resume();
  const res = await get(port, TOKEN);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/x-ndjson');
  const writer = (async () => {
    fs.appendFileSync(f, 'one\ntwo\n');
    await new Promise((ok) => setTimeout(ok, 100));
    fs.appendFileSync(f, 'three\n');
    fs.renameSync(f, path.join(d, '2026-12-07-1.log'));
    await new Promise((ok) => setTimeout(ok, 100));
    fs.writeFileSync(f, 'four\n');
  })();
  const got = await readLines(res, (g) => g.length >= 4);
  await writer;
  assert.deepEqual(
    got.map((g) => g.line),
    ['one', 'two', 'three', 'four'],
  );
  assert.match(got[0].id, /^\d+:11$/);
  const second = await get(port, TOKEN);
  assert.equal(second.statusCode, 409, 'one caller per follow');
  second.resume();
  res.destroy();
  assert.deepEqual(await s.done, { end: 'hung_up', lines: 4 });
});

test('a resume from an id goes on after it; nobody coming ends the Job idle; the lifetime ends the stream with its last event', async () => {
  const { f, file } = logFile();
  fs.appendFileSync(f, 'a\nb\n');
  const ino = fs.statSync(f, { bigint: true }).ino;
  const s = start({ file, start: { offset: 0 }, maxLine: 1024, idleMs: 10_000, pollMs: 20, lifetimeMs: 1500 });
  const res = await get(await s.listening, TOKEN, `?from=${ino}:9`);
  const got = await readLines(res, () => false);
  assert.deepEqual(got, [{ id: `${ino}:11`, line: 'b' }, { end: 'lifetime' }]);
  assert.equal((await s.done).end, 'lifetime');
  const idle = start({ file, start: { offset: 0 }, maxLine: 1024, idleMs: 50 });
  await idle.listening;
  assert.equal((await idle.done).end, 'idle');
  assert.deepEqual(parseFrom('12:34'), { ino: 12n, offset: 34 });
  assert.deepEqual(parseFrom('34'), { offset: 34 });
  for (const bad of ['', 'x', '1:2:3', '-1', '1e5']) assert.equal(parseFrom(bad), undefined, bad);
});

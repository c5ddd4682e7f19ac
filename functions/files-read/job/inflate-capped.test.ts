import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { content, makeWorld, SECRET_TEXT, sha256 } from '../../../job/testing/world.ts';
import { inflateCapped } from './inflate-capped.ts';

const MiB = 1 << 20;

test('decompress reads a .log.gz as its text, both digests of that text; concatenated members read as one', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('logs'));
  const text = Buffer.from('[12:00:00] [Server thread/INFO]: Done (3.2s)!\n'.repeat(50));
  fs.writeFileSync(w.p('logs/2026-12-07-1.log.gz'), Buffer.concat([zlib.gzipSync(text), zlib.gzipSync('tail\n')]));
  const r = await w.run({ op: 'read', path: 'logs/2026-12-07-1.log.gz', decompress: true });
  assert.equal(r.code, undefined, r.error);
  const want = Buffer.concat([text, Buffer.from('tail\n')]);
  assert.deepEqual(content(r), want);
  assert.equal(r.sha256, sha256(want));
  assert.equal(r.content_sha256, sha256(want));
  assert.equal(r.truncated, undefined, 'zero values are left out of the result line');
  // Any name: the magic decides.
  fs.writeFileSync(w.p('notes.txt'), zlib.gzipSync('hello\n'));
  assert.equal(content(await w.run({ op: 'read', path: 'notes.txt', decompress: true })).toString(), 'hello\n');
});

test('a file that is not gzip, or damaged gzip, is gzip_invalid; without decompress the same .gz reads raw', async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('plain.log.gz'), 'not gzip at all\n');
  const r = await w.run({ op: 'read', path: 'plain.log.gz', decompress: true });
  assert.deepEqual(r, { code: 'gzip_invalid', error: 'plain.log.gz is not gzip-compressed; read it without decompress=true' });
  fs.writeFileSync(w.p('empty.gz'), '');
  assert.equal((await w.run({ op: 'read', path: 'empty.gz', decompress: true })).code, 'gzip_invalid');
  const whole = zlib.gzipSync(Buffer.alloc(100_000, 'x'));
  fs.writeFileSync(w.p('cut.gz'), whole.subarray(0, whole.length - 20));
  const cut = await w.run({ op: 'read', path: 'cut.gz', decompress: true });
  assert.equal(cut.code, 'gzip_invalid');
  assert.match(cut.error!, /^cut\.gz is damaged gzip data \(/);
  assert.deepEqual(content(await w.run({ op: 'read', path: 'cut.gz' })), whole.subarray(0, whole.length - 20));
});

test('a gzip bomb (10 MiB of zeros) answers the first 1 MiB, truncated, inflating no further', async () => {
  const w = makeWorld();
  const bomb = zlib.gzipSync(Buffer.alloc(10 * MiB));
  fs.writeFileSync(w.p('bomb.gz'), bomb);
  const r = await w.run({ op: 'read', path: 'bomb.gz', decompress: true });
  assert.equal(r.code, undefined, r.error);
  assert.equal(content(r).length, MiB);
  assert.equal(r.truncated, true);
  // Exactly the limit is not truncated.
  fs.writeFileSync(w.p('max.gz'), zlib.gzipSync(Buffer.alloc(MiB, 0x61)));
  const max = await w.run({ op: 'read', path: 'max.gz', decompress: true });
  assert.equal(content(max).length, MiB);
  assert.equal(max.truncated, undefined);
});

test('the cap holds the inflation itself: a 1 GiB bomb stops after about the bound, in bounded memory', async () => {
  // 1 GiB of zeros is ~1 MiB of gzip: built by deflating a stream, never holding the GiB.
  const w = makeWorld();
  const parts: Buffer[] = [];
  const gz = zlib.createGzip({ level: 9 });
  gz.on('data', (b: Buffer) => parts.push(b));
  const zeros = Buffer.alloc(MiB);
  for (let i = 0; i < 1024; i++) if (!gz.write(zeros)) await new Promise((ok) => gz.once('drain', ok));
  await new Promise((ok) => gz.end(ok));
  fs.writeFileSync(w.p('gib.gz'), Buffer.concat(parts));
  const fd = fs.openSync(w.p('gib.gz'), 'r');
  const before = process.memoryUsage().rss;
  const t0 = performance.now();
  try {
    const r = await inflateCapped(fd, MiB);
    assert.ok('text' in r && r.truncated && r.text.length === MiB);
  } finally {
    fs.closeSync(fd);
  }
  const ms = performance.now() - t0;
  assert.ok(ms < 2000, `inflating 1 GiB would take seconds; the cap stopped it in ${ms.toFixed(0)} ms`);
  assert.ok(process.memoryUsage().rss - before < 64 * MiB, 'bounded memory');
});

test('decompress of a gzip holding the withheld content is refused as the file itself is', async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('sneaky.gz'), zlib.gzipSync(SECRET_TEXT));
  const r = await w.run({ op: 'read', path: 'sneaky.gz', decompress: true });
  assert.equal(r.code, 'bad_path');
  assert.equal(r.content, undefined);
  fs.symlinkSync('../outside/secret.txt', w.p('out.gz'));
  assert.equal((await w.run({ op: 'read', path: 'out.gz', decompress: true })).code, 'bad_path');
});

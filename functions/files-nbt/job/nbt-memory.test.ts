/**
 * The decoder's memory bound, measured: hostile payloads are decoded in a child process whose V8
 * heap is capped far below what they would make unbounded (8 MiB of NBT holding 8 million empty
 * compounds is some hundreds of MiB of objects), and each is refused, not answered by a crash.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const DECODE = fileURLToPath(new URL('./nbt-decode.ts', import.meta.url));
const HEAP = ['--max-old-space-size=48', '--max-semi-space-size=1'];

test('8 million empty compounds, 4 million empty lists and a gzip bomb are refused with a 48 MiB heap', { timeout: 60_000 }, () => {
  const script = `
import zlib from 'node:zlib';
import { decodeNbt, payloadOf, NbtRefusal } from ${JSON.stringify(DECODE)};
const int32 = (n) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
const list = (elem, n, each) => Buffer.concat([Buffer.from([10, 0, 0, 9, 0, 1, 0x6c, elem]), int32(n), Buffer.alloc(n * each), Buffer.from([0])]);
const out = [];
for (const [what, run] of [
  ['compounds', () => decodeNbt(list(10, 8 << 20, 1))],
  ['lists', () => decodeNbt(list(9, 4 << 20, 5))],
  ['bomb', () => decodeNbt(payloadOf(zlib.gzipSync(Buffer.alloc(200 << 20)), 'gzip'))],
]) {
  try { run(); out.push([what, 'answered']); } catch (e) { out.push([what, e instanceof NbtRefusal ? e.code : String(e)]); }
}
console.log(JSON.stringify(out));
`;
  const r = spawnSync(process.execPath, [...HEAP, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 50_000 });
  assert.equal(r.status, 0, r.stderr.slice(0, 2000));
  assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').at(-1)!), [
    ['compounds', 'too_large'],
    ['lists', 'too_large'],
    ['bomb', 'nbt_invalid'],
  ]);
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ExternalSorter, FAN_IN, MAX_CHUNK_RECORDS } from './external-sort.ts';

function tmp(t: { after: (fn: () => void) => void }): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-sort-'));
  t.after(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

test('records come back in byte order, duplicates kept, across more runs than one merge takes; run files are removed', (t) => {
  const dir = tmp(t);
  // A tiny chunk forces one run per few records, and more runs than FAN_IN forces a second round.
  const s = new ExternalSorter(dir, 'r', 200);
  const input: Buffer[] = [];
  for (let i = 0; i < 3000; i++) {
    const rec = Buffer.from(`k${(i * 7919) % 1000}\0${i % 3}`);
    input.push(rec);
    s.add(rec);
  }
  assert.ok(s.runCount > FAN_IN, `only ${s.runCount} runs`);
  const out = [...s.sorted()];
  assert.deepEqual(out.map(String), input.sort(Buffer.compare).map(String));
  assert.deepEqual(fs.readdirSync(dir), []);
});

test('a sort that fits in one chunk writes no file; records longer than the read buffer survive', (t) => {
  const dir = tmp(t);
  const s = new ExternalSorter(dir, 'r');
  for (const x of ['b', 'a', 'c']) s.add(Buffer.from(x));
  assert.deepEqual([...s.sorted()].map(String), ['a', 'b', 'c']);
  assert.deepEqual(fs.readdirSync(dir), []);
  const big = new ExternalSorter(dir, 'big', 1);
  big.add(Buffer.alloc(200_000, 'z'));
  big.add(Buffer.alloc(100_000, 'y'));
  const got = [...big.sorted()];
  assert.deepEqual(
    got.map((b) => [b.length, b[0]]),
    [
      [100_000, 0x79],
      [200_000, 0x7a],
    ],
  );
});

test('short records spill by count, not only by bytes: a chunk never indexes more than MAX_CHUNK_RECORDS', (t) => {
  const dir = tmp(t);
  const s = new ExternalSorter(dir, 'r'); // 4 MiB chunks: these records would fit in one by bytes
  const n = MAX_CHUNK_RECORDS * 2 + 5;
  for (let i = 0; i < n; i++) s.add(Buffer.of((i * 37) & 0xff, (i * 101) & 0xff));
  assert.equal(s.runCount, 2);
  let prev: Buffer | undefined;
  let count = 0;
  for (const rec of s.sorted()) {
    if (prev) assert.ok(Buffer.compare(prev, rec) <= 0);
    prev = rec;
    count++;
  }
  assert.equal(count, n);
  assert.deepEqual(fs.readdirSync(dir), []);
});

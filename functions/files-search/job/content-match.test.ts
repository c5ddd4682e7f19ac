import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ContentHit, contentScanner, findIn, lineText, needleOf, type ScanEnd } from './content-match.ts';

/** Scans `text` held in memory with the given block size; answers the hits and how it ended. */
async function scanText(text: string | Buffer, needle: string, o: { block?: number; budget?: number; max?: number; textBytes?: number; stopAfter?: number } = {}) {
  const src = typeof text === 'string' ? Buffer.from(text) : text;
  const budget = { bytes: o.budget ?? 1 << 30 };
  const scan = contentScanner(needleOf(needle), { maxFileBytes: o.max ?? 1 << 30, budget, pastBudget: async () => false, blockBytes: o.block, textBytes: o.textBytes });
  const hits: ContentHit[] = [];
  const end: ScanEnd = await scan({
    size: src.length,
    read: (buf, off, len, pos) => src.copy(buf, off, pos, Math.min(pos + len, src.length)),
    onMatch: (h) => {
      if (o.stopAfter !== undefined && hits.length === o.stopAfter) return false;
      hits.push(h);
      return true;
    },
  });
  return { hits, end, read: (o.budget ?? 1 << 30) - budget.bytes };
}

test('ASCII letters match in any case; every other byte exactly; Unicode text matches itself only', async () => {
  const text = 'motd=Hello World\nrcon.PASSWORD=x\nname=Ärger\nname=ärger\nstraße\nSTRASSE\n';
  assert.deepEqual(
    (await scanText(text, 'hello')).hits.map((h) => [h.line, h.column, h.text]),
    [[1, 6, 'motd=Hello World']],
  );
  assert.deepEqual(
    (await scanText(text, 'Rcon.Password=')).hits.map((h) => h.line),
    [2],
  );
  // Non-ASCII bytes are compared exactly: Ä is not ä, ß is not SS.
  assert.deepEqual(
    (await scanText(text, 'Ärger')).hits.map((h) => h.line),
    [3],
  );
  assert.deepEqual(
    (await scanText(text, 'ärger')).hits.map((h) => h.line),
    [4],
  );
  assert.deepEqual(
    (await scanText(text, 'straße')).hits.map((h) => h.line),
    [5],
  );
  assert.deepEqual((await scanText(text, 'nothing here')).hits, []);
  // The column counts bytes: "Ä" is two of them.
  assert.equal((await scanText('Ä x\n', 'x')).hits[0].column, 4);
});

test('one match per line (the first), line numbers 1-based, CRLF line ends kept out of the text', async () => {
  const { hits } = await scanText('aa aa aa\r\nbb\r\n\r\nxaa\n', 'aa');
  assert.deepEqual(
    hits.map((h) => [h.line, h.column, h.text]),
    [
      [1, 1, 'aa aa aa'],
      [4, 2, 'xaa'],
    ],
  );
});

test('a match across every block edge is found exactly once, with the same line, column and text as in one block', async () => {
  const lines = Array.from({ length: 60 }, (_, i) => `${'x'.repeat(i % 7)}line ${i} has the Needle${i % 3 === 0 ? ' and NEEDLE again' : ''} end`);
  const text = `${lines.join('\n')}\nneedle`;
  const whole = await scanText(text, 'needle', { block: 1 << 20 });
  assert.equal(whole.hits.length, 61);
  assert.deepEqual(whole.hits.at(-1), { line: 61, column: 1, text: 'needle' });
  for (const block of [1, 2, 3, 5, 6, 7, 11, 64]) {
    for (const textBytes of [8, 64]) {
      const small = await scanText(text, 'needle', { block, textBytes });
      const big = await scanText(text, 'needle', { block: 1 << 20, textBytes });
      assert.deepEqual(small.hits, big.hits, `block ${block}, context ${textBytes}`);
      assert.equal(small.end, 'done');
      assert.equal(small.read, Buffer.byteLength(text), 'every byte read once');
    }
  }
});

test('a line longer than a block: its match, and one match only, even when the line goes on for blocks', async () => {
  const line = `${'a'.repeat(5000)}NEEDLE${'b'.repeat(3000)}needle${'c'.repeat(2000)}`;
  const text = `first\n${line}\nlast needle`;
  const { hits } = await scanText(text, 'needle', { block: 100, textBytes: 64 });
  assert.deepEqual(
    hits.map((h) => [h.line, h.column]),
    [
      [2, 5001],
      [3, 6],
    ],
  );
  // The text is the match with context around it, bounded.
  assert.equal(hits[0].text, `${'a'.repeat(29)}NEEDLE${'b'.repeat(29)}`);
});

test('the text is at most the bound, cut on character boundaries, valid UTF-8 around the match', () => {
  const line = Buffer.from(`${'é'.repeat(400)}KEY${'€'.repeat(400)}`);
  const at = line.indexOf('KEY');
  for (const max of [9, 10, 11, 12, 100, 512]) {
    const t = lineText(line, at, 3, 0, max);
    assert.ok(Buffer.byteLength(t) <= max, `${max}: ${Buffer.byteLength(t)}`);
    assert.ok(t.includes('KEY'));
    assert.ok(!t.includes('\ufffd'), `${max}: ${t}`);
    assert.equal(Buffer.from(t).toString(), t);
  }
  // Invalid bytes show as U+FFFD: the text is valid UTF-8 whatever the file holds.
  const bad = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('KEY'), Buffer.from([0xc3])]);
  assert.equal(lineText(bad, 2, 3, 0), '\ufffd\ufffdKEY\ufffd');
});

test('a NUL in the first 8 KiB marks a file binary, read no further; one after it is searched as text', async () => {
  const bin = Buffer.concat([Buffer.from('needle\n'), Buffer.alloc(1), Buffer.alloc(100_000, 0x61)]);
  const b = await scanText(bin, 'needle', { block: 4096 });
  assert.deepEqual([b.end, b.hits.length], ['binary', 0]);
  assert.ok(b.read <= 8192, String(b.read));
  const late = Buffer.concat([Buffer.alloc(9000, 0x61), Buffer.alloc(1), Buffer.from('\nneedle\n')]);
  const l = await scanText(late, 'needle');
  assert.deepEqual([l.end, l.hits.map((h) => h.line)], ['done', [2]]);
});

test('a text file over the size limit is only probed (too-large); a binary one is binary', async () => {
  const r = await scanText(`needle\n${'x'.repeat(20_000)}`, 'needle', { max: 10_000 });
  assert.deepEqual([r.end, r.hits.length], ['too-large', 0]);
  assert.ok(r.read <= 8192);
  assert.equal((await scanText(Buffer.concat([Buffer.alloc(20_000), Buffer.from('needle')]), 'needle', { max: 10_000 })).end, 'binary');
});

test('the byte budget stops a scan (budget); the caller stopping it is stopped', async () => {
  const text = Array.from({ length: 1000 }, (_, i) => `line ${i} needle`).join('\n');
  const r = await scanText(text, 'needle', { block: 512, budget: 2000 });
  assert.equal(r.end, 'budget');
  assert.ok(r.read <= 2000);
  assert.ok(r.hits.length > 0 && r.hits.length < 1000);
  // Every hit found before the budget ended is a real line, numbered right.
  for (const h of r.hits) assert.equal(h.text, `line ${h.line - 1} needle`);
  const s = await scanText(text, 'needle', { stopAfter: 3 });
  assert.deepEqual([s.end, s.hits.length], ['stopped', 3]);
});

test('the time budget stops a scan between blocks', async () => {
  const src = Buffer.from('needle\n'.repeat(1000));
  let asks = 0;
  const scan = contentScanner(needleOf('needle'), {
    maxFileBytes: 1 << 30,
    budget: { bytes: 1 << 30 },
    pastBudget: async () => ++asks > 2,
    blockBytes: 700,
  });
  const hits: ContentHit[] = [];
  const end = await scan({ size: src.length, read: (buf, off, len, pos) => src.copy(buf, off, pos, pos + len), onMatch: (h) => hits.push(h) > 0 });
  assert.equal(end, 'budget');
  assert.ok(hits.length > 0 && hits.length < 1000, String(hits.length));
});

test('findIn: the rare byte found in either case, candidates verified, bounds held', () => {
  const h = Buffer.from('xxWxxwxxWORLDxxworld');
  assert.equal(findIn(h, 0, h.length - 4, needleOf('world')), 8);
  assert.equal(findIn(h, 9, h.length - 4, needleOf('world')), 15);
  assert.equal(findIn(h, 0, 8, needleOf('world')), -1);
  assert.equal(findIn(Buffer.from('a.b.c.password'), 0, 7, needleOf('.PASSWORD')), 5);
  assert.equal(needleOf('motd=hi').lo, 0x3d, "'=' is rarer than these letters: one native scan");
  assert.deepEqual([needleOf('Ez').lo, needleOf('Ez').up], [0x7a, 0x5a], "'z' is rarer than 'e': both its cases are scanned for");
  assert.equal(needleOf('é').lo, 0xc3, 'a byte of no ASCII text is the rarest');
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cutMark, type LastLinesOptions, lastLines, linesStart, type ReadAt } from './last-lines.ts';

/** Reads from a buffer, counting the bytes asked for. */
function source(bytes: Buffer | string) {
  const b = Buffer.from(bytes);
  const seen = { bytes: 0 };
  const readAt: ReadAt = (buf, len, pos) => {
    seen.bytes += len;
    return b.copy(buf, 0, pos, Math.min(b.length, pos + len));
  };
  return { readAt, size: b.length, seen };
}
const opts = (o: Partial<LastLinesOptions> = {}): LastLinesOptions => ({ lines: 3, maxScan: 1 << 20, maxLine: 1024, block: 4, ...o });
const tailOf = (text: Buffer | string, o: Partial<LastLinesOptions> = {}) => {
  const s = source(text);
  return lastLines(s.readAt, s.size, opts(o));
};

test('the last lines, oldest first, whatever the block edges; fewer when the file has fewer', () => {
  const text = 'one\ntwo\nthree\nfour\nfive\n';
  for (const block of [1, 2, 3, 4, 7, 64]) {
    assert.deepEqual(tailOf(text, { block }), { lines: ['three', 'four', 'five'], truncated: false }, `block ${block}`);
    assert.deepEqual(tailOf(text, { block, lines: 1 }).lines, ['five']);
    assert.deepEqual(tailOf(text, { block, lines: 10 }), { lines: ['one', 'two', 'three', 'four', 'five'], truncated: false });
  }
});

test('CRLF ends lines as LF does; a last line without a newline is a line; empty lines count', () => {
  assert.deepEqual(tailOf('a\r\nb\r\nc\r\n').lines, ['a', 'b', 'c']);
  assert.deepEqual(tailOf('a\nb\nno newline').lines, ['a', 'b', 'no newline']);
  assert.deepEqual(tailOf('a\n\n\nb\n').lines, ['', '', 'b']);
  assert.deepEqual(tailOf('\n').lines, ['']);
  assert.deepEqual(tailOf('x').lines, ['x']);
});

test('an empty file has no lines and reads nothing', () => {
  const s = source('');
  assert.deepEqual(lastLines(s.readAt, 0, opts()), { lines: [], truncated: false });
  assert.equal(s.seen.bytes, 0);
});

test('a character split by a block edge decodes whole', () => {
  const text = 'añb\n€€€\n😀x😀\n';
  for (let block = 1; block <= 8; block++) assert.deepEqual(tailOf(text, { block }).lines, ['añb', '€€€', '😀x😀'], `block ${block}`);
});

test('a line over the cap keeps its first bytes, cut on a character start, and is marked; truncated says so', () => {
  const long = '€'.repeat(10); // 30 bytes
  const r = tailOf(`short\n${long}\nend\n`, { maxLine: 8 });
  assert.equal(r.truncated, true);
  // 8 bytes would split the third euro sign: 6 bytes (two signs) are kept.
  assert.deepEqual(r.lines, ['short', `€€${cutMark(24)}`, 'end']);
  assert.doesNotMatch(r.lines[1]!, /\uFFFD/);
});

test('the scan is bounded: it stops at maxScan bytes, drops the line whose start it did not reach, and says truncated', () => {
  const text = `${'x'.repeat(100)}\nlast\n`;
  const s = source(text);
  const r = lastLines(s.readAt, s.size, opts({ maxScan: 20, block: 8 }));
  assert.deepEqual(r, { lines: ['last'], truncated: true });
  assert.ok(s.seen.bytes <= 20, `read ${s.seen.bytes} bytes`);
  // Enough lines found before the bound: no more is read than the blocks holding them.
  const many = source(`${'y'.repeat(10_000)}\n${'a\n'.repeat(10)}`);
  lastLines(many.readAt, many.size, opts({ lines: 3, block: 4 }));
  assert.ok(many.seen.bytes <= 12, `read ${many.seen.bytes} bytes`);
});

test('a file that shrank under the read answers what it still holds', () => {
  const s = source('a\nb\n');
  assert.deepEqual(lastLines(s.readAt, 10, opts({ block: 64 })).lines.slice(-2), ['a', 'b']);
});

test('linesStart: the offset where the last lines begin, whatever the block edges, within the scan bound', () => {
  const at = (text: string, o: Partial<LastLinesOptions> = {}) => {
    const s = source(text);
    const { lines, maxScan, block } = opts(o);
    return linesStart(s.readAt, s.size, { lines, maxScan, block });
  };
  const text = 'one\ntwo\nthree\nfour\nfive\n';
  for (const block of [1, 3, 4, 64]) {
    assert.equal(at(text, { block }), text.indexOf('three'), `block ${block}`);
    assert.equal(at(text, { block, lines: 1 }), text.indexOf('five'));
    assert.equal(at(text, { block, lines: 10 }), 0);
  }
  // The last line without a newline counts, as the tail counts it.
  assert.equal(at('a\nb\nno newline', { lines: 2 }), 2);
  assert.equal(at('', { lines: 2 }), 0);
  // The scan ends first: the first whole line it reached; none reached: the end.
  assert.equal(at('xxxxxxxx\nab\ncd\n', { lines: 5, maxScan: 8, block: 4 }), 9);
  assert.equal(at('xxxxxxxxxxxxxxxx', { lines: 5, maxScan: 8, block: 4 }), 16);
});

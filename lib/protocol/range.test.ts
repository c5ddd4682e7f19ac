import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bytesEtag, CONTENT_RANGE_SHAPE, contentRange, decideRange, ETAG_SHAPE, type FileVersion, fileEtag, MAX_RANGE_HEADER, parseRange, rangeAsk } from './range.ts';

const part = (start: number, end: number) => ({ kind: 'partial', start, end });
const NONE = { kind: 'unsatisfiable' };

test('one range: a-b, a-, -n, clamped to the file; the unit in any case, blanks around it', () => {
  assert.deepEqual(parseRange('bytes=0-99', 1000), part(0, 99));
  assert.deepEqual(parseRange('bytes=100-', 1000), part(100, 999));
  assert.deepEqual(parseRange('bytes=-10', 1000), part(990, 999));
  assert.deepEqual(parseRange('bytes=-5000', 1000), part(0, 999));
  assert.deepEqual(parseRange('bytes=990-5000', 1000), part(990, 999));
  assert.deepEqual(parseRange('bytes=999-999', 1000), part(999, 999));
  assert.deepEqual(parseRange('BYTES= 5-9 ', 1000), part(5, 9));
  assert.deepEqual(parseRange('bytes=0-99999999999999999999', 1000), part(0, 999));
});

test('unsatisfiable: starting at or past the end, a suffix of 0, any range of an empty file', () => {
  assert.deepEqual(parseRange('bytes=1000-', 1000), NONE);
  assert.deepEqual(parseRange('bytes=1000-2000', 1000), NONE);
  assert.deepEqual(parseRange('bytes=99999999999999999999-', 1000), NONE);
  assert.deepEqual(parseRange('bytes=-0', 1000), NONE);
  assert.deepEqual(parseRange('bytes=0-', 0), NONE);
  assert.deepEqual(parseRange('bytes=-1', 0), NONE);
  assert.equal(contentRange(NONE as never, 1000), 'bytes */1000');
  assert.equal(contentRange(part(5, 9) as never, 1000), 'bytes 5-9/1000');
  assert.match(contentRange(NONE as never, 1000)!, CONTENT_RANGE_SHAPE);
  assert.match(contentRange(part(5, 9) as never, 1000)!, CONTENT_RANGE_SHAPE);
});

test('ignored (the whole file): several ranges, another unit, malformed, b < a, absent', () => {
  for (const h of [
    'bytes=0-1,5-9',
    'bytes=0-1, 5-',
    'items=0-1',
    'bytes=',
    'bytes=-',
    'bytes=a-b',
    'bytes=1-0',
    'bytes=0x1-',
    'bytes=+1-2',
    'bytes 0-1',
    'bytes=1 - 2',
    '0-1',
    'bytes=--1',
    'bytes=1-2-3',
  ]) {
    assert.equal(parseRange(h, 1000), undefined, h);
    assert.deepEqual(decideRange({ range: h }, 1000, '"x"'), { kind: 'whole' }, h);
  }
  assert.equal(parseRange(undefined, 1000), undefined);
  assert.deepEqual(decideRange({}, 1000, '"x"'), { kind: 'whole' });
});

test('If-Range: only our exact ETag keeps the range; a date, a weak or another ETag is the whole file', () => {
  const etag = '"fabc"';
  assert.deepEqual(decideRange({ range: 'bytes=10-', ifRange: etag }, 100, etag), part(10, 99));
  assert.deepEqual(decideRange({ range: 'bytes=100-', ifRange: etag }, 100, etag), NONE);
  for (const other of ['"fabd"', 'W/"fabc"', 'fabc', 'Thu, 03 Dec 2026 14:00:00 GMT', '"fabc", "x"', '*', '']) {
    assert.deepEqual(decideRange({ range: 'bytes=10-', ifRange: other }, 100, etag), { kind: 'whole' }, other);
    // A changed file is never a 416 either: the whole new file.
    assert.deepEqual(decideRange({ range: 'bytes=100-', ifRange: other }, 100, etag), { kind: 'whole' }, other);
  }
  // If-Range without a Range means nothing.
  assert.deepEqual(decideRange({ ifRange: etag }, 100, etag), { kind: 'whole' });
});

test('forwarding is bounded: an over-long Range, or an over-long If-Range, drops the pair', () => {
  const long = 'x'.repeat(MAX_RANGE_HEADER + 1);
  assert.deepEqual(rangeAsk('bytes=1-', undefined), { range: 'bytes=1-' });
  assert.deepEqual(rangeAsk('bytes=1-', '"e"'), { range: 'bytes=1-', ifRange: '"e"' });
  assert.deepEqual(rangeAsk(undefined, '"e"'), {});
  assert.deepEqual(rangeAsk(`bytes=1-${'0'.repeat(MAX_RANGE_HEADER)}`, '"e"'), {});
  // Never a Range alone where the caller sent a validator: that could splice.
  assert.deepEqual(rangeAsk('bytes=1-', long), {});
  assert.deepEqual(rangeAsk('bytes=1-', ['"a"', '"b"']), {});
  assert.deepEqual(rangeAsk(['bytes=1-', 'bytes=2-'], undefined), {});
});

test('the ETag is strong and changes with the device, the inode, the size, the mtime or the ctime', () => {
  const v: FileVersion = { dev: 1n, ino: 2n, size: 3n, mtimeNs: 1_700_000_000_000_000_001n, ctimeNs: 1_700_000_000_000_000_002n };
  const e = fileEtag(v);
  assert.match(e, ETAG_SHAPE);
  assert.ok(!e.startsWith('W/'));
  assert.equal(fileEtag({ ...v }), e);
  for (const k of Object.keys(v) as (keyof FileVersion)[]) assert.notEqual(fileEtag({ ...v, [k]: v[k] + 1n }), e, k);
  const b = bytesEtag(Buffer.from('motd=hi\n'));
  assert.match(b, ETAG_SHAPE);
  assert.equal(bytesEtag(Buffer.from('motd=hi\n')), b);
  assert.notEqual(bytesEtag(Buffer.from('motd=ho\n')), b);
  assert.notEqual(b, e);
});

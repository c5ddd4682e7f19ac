import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatRecoveredLine, MAX_RECOVERED, parseRecoveredLine, RECOVERED_PREFIX, recoveredIn } from './recovered.ts';
import { formatResultLine, ResultLineScanner } from './result.ts';

const OP = '0123456789abcdef';

test('a recovery line reads back as it was written', () => {
  const line = formatRecoveredLine({ op: OP, kind: 'unzip', now: 'old' });
  assert.equal(line, `${RECOVERED_PREFIX}{"op":"${OP}","kind":"unzip","now":"old"}\n`);
  assert.deepEqual(parseRecoveredLine(line.trimEnd()), { op: OP, kind: 'unzip', now: 'old' });
});

test('a malformed recovery line, or one naming no op id, is no recovery', () => {
  for (const bad of [
    `${RECOVERED_PREFIX}{"op":"${OP}","kind":"unzip","now":"maybe"}`,
    `${RECOVERED_PREFIX}{"op":"../x","kind":"unzip","now":"new"}`,
    `${RECOVERED_PREFIX}{"op":"${OP}","kind":"Unzip!","now":"new"}`,
    `${RECOVERED_PREFIX}{"op":"${OP}"`,
    `${RECOVERED_PREFIX}null`,
    `{"op":"${OP}","kind":"unzip","now":"new"}`,
  ]) {
    assert.equal(parseRecoveredLine(bad), undefined, bad);
  }
});

test('the scanner keeps the recovery lines before the result, bounded, and they never count as the diagnostic', () => {
  const s = new ResultLineScanner();
  let log = '';
  for (let i = 0; i < MAX_RECOVERED + 3; i++) log += formatRecoveredLine({ op: OP, kind: 'unzip', now: 'new' });
  log += 'some stderr noise\n' + formatResultLine({ files: 2 });
  assert.equal(s.push(log), '{"files":2}');
  assert.equal(s.recovered.length, MAX_RECOVERED);
  assert.deepEqual(s.recovered[0], { op: OP, kind: 'unzip', now: 'new' });
  assert.equal(s.lastOtherLine, 'some stderr noise');
});

test('a whole log gives every recovery it reports', () => {
  const other = 'fedcba9876543210';
  const log = `x\n${formatRecoveredLine({ op: OP, kind: 'unzip', now: 'new' })}${formatRecoveredLine({ op: other, kind: 'unzip', now: 'gone' })}${formatResultLine({})}`;
  assert.deepEqual(recoveredIn(log), [
    { op: OP, kind: 'unzip', now: 'new' },
    { op: other, kind: 'unzip', now: 'gone' },
  ]);
});

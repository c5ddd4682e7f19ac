import assert from 'node:assert/strict';
import { test } from 'node:test';
import { diagnosticTail, formatResultLine, lastProgress, lastResultPayload, ProgressThrottle, RESULT_PREFIX, ResultLineScanner } from './result.ts';
import { MalformedResultError, parseResultPayload } from './result-parse.ts';

test('formatResultLine omits zero values and writes exactly one prefixed line', () => {
  const line = formatResultLine({ code: '', sha256: 'ab', truncated: false, avail: 0, entries: [] });
  assert.equal(line, RESULT_PREFIX + '{"sha256":"ab"}\n');
  assert.equal(line.split('\n').length, 2);
});

test('formatResultLine keeps Go field order', () => {
  const line = formatResultLine({ avail: -1, entries: [{ name: 'a', size: 1, is_dir: false, mod_time: 't' }], truncated: true });
  assert.equal(line, RESULT_PREFIX + '{"entries":[{"name":"a","size":1,"is_dir":false,"mod_time":"t"}],"truncated":true,"avail":-1}\n');
});

test('binary content survives the round trip', () => {
  const bytes = Buffer.from([0xff, 0xfe, 0x6f, 0x6b, 0x00, 0x80]);
  const line = formatResultLine({ content: bytes.toString('base64') });
  const r = parseResultPayload(line.slice(RESULT_PREFIX.length).trimEnd());
  assert.deepEqual(Buffer.from(r.content!, 'base64'), bytes);
});

test('parseResultPayload refuses what is not a Result', () => {
  assert.throws(() => parseResultPayload('{'), MalformedResultError);
  assert.throws(() => parseResultPayload('[]'), MalformedResultError);
  assert.throws(() => parseResultPayload('{"code":5}'), MalformedResultError);
  assert.deepEqual(parseResultPayload('{"code":"chmod_denied","x":1}'), { code: 'chmod_denied' });
});

test('scanner finds the first result line among noise, across chunk boundaries', () => {
  const s = new ResultLineScanner();
  assert.equal(s.push('warning: x\nFELIS-FILES-RES'), undefined);
  assert.equal(s.push('ULT: {"sha256":"1"}\nFELIS-FILES-RESULT: {"sha256":"2"}\n'), '{"sha256":"1"}');
  assert.equal(s.payload, '{"sha256":"1"}');
});

test('scanner without a result remembers the last other line; end() takes an unterminated line', () => {
  const s = new ResultLineScanner();
  s.push('first\nsecond\n');
  assert.equal(s.end(), undefined);
  assert.equal(s.lastOtherLine, 'second');
  const t = new ResultLineScanner();
  t.push('x\nFELIS-FILES-RESULT: {}');
  assert.equal(t.end(), '{}');
});

test('lastResultPayload takes the last marked line', () => {
  assert.equal(lastResultPayload('a\nFELIS-FILES-RESULT: {"files":1}\nnoise\nFELIS-FILES-RESULT: {"files":2}\n'), '{"files":2}');
  assert.equal(lastResultPayload('no result here'), undefined);
});

test('lastProgress skips truncated lines and reports none when absent', () => {
  const log = 'FELIS-FILES-PROGRESS: {"done":1,"total":9}\nFELIS-FILES-PROGRESS: {"done":5,"total":9}\nFELIS-FILES-PROGRESS: {"done":7,';
  assert.deepEqual(lastProgress(log), { done: 5, total: 9 });
  assert.equal(lastProgress('nothing'), undefined);
});

test('progress throttle follows the pinned sequence', () => {
  let now = 0;
  const lines: string[] = [];
  const p = new ProgressThrottle(
    (l) => lines.push(l),
    1000,
    () => now,
  );
  p.report(0, 100);
  p.report(10, 100);
  now += 999;
  p.report(20, 100);
  now += 1;
  p.report(30, 100);
  p.report(100, 100);
  assert.deepEqual(lines, ['FELIS-FILES-PROGRESS: {"done":0,"total":100}\n', 'FELIS-FILES-PROGRESS: {"done":30,"total":100}\n', 'FELIS-FILES-PROGRESS: {"done":100,"total":100}\n']);
});

test('diagnosticTail cuts to the final 512 bytes with a marker', () => {
  assert.equal(diagnosticTail('  short  '), 'short');
  const long = 'x'.repeat(600) + 'END';
  const t = diagnosticTail(long);
  assert.ok(t.startsWith('...') && t.endsWith('END'));
  assert.equal(Buffer.byteLength(t), 515);
});

/** A fake clock and timer: `advance` runs the timers that come due, in order. */
function fakeTime() {
  let now = 0;
  let timers: Array<{ at: number; fn: () => void; id: number }> = [];
  let next = 1;
  return {
    now: () => now,
    timers: {
      set: (fn: () => void, ms: number) => {
        const id = next++;
        timers.push({ at: now + ms, fn, id });
        return id;
      },
      clear: (h: unknown) => {
        timers = timers.filter((t) => t.id !== h);
      },
    },
    advance(ms: number) {
      const end = now + ms;
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const t = timers[0];
        if (!t || t.at > end) break;
        timers.shift();
        now = t.at;
        t.fn();
      }
      now = end;
    },
    pending: () => timers.length,
  };
}

test('progress throttle: a throttled value prints once the interval allows (trailing edge), the latest one', () => {
  const clock = fakeTime();
  const lines: string[] = [];
  const p = new ProgressThrottle((l) => lines.push(l), 1000, clock.now, clock.timers);
  p.report(0, 100);
  clock.advance(10);
  p.report(4, 100);
  clock.advance(10);
  p.report(8, 100);
  assert.equal(lines.length, 1, 'held back while the interval runs');
  clock.advance(979);
  assert.equal(lines.length, 1);
  clock.advance(1);
  assert.deepEqual(lines, ['FELIS-FILES-PROGRESS: {"done":0,"total":100}\n', 'FELIS-FILES-PROGRESS: {"done":8,"total":100}\n']);
  assert.equal(clock.pending(), 0);
  // Nothing waiting: no timer, and no line repeated.
  clock.advance(5000);
  assert.equal(lines.length, 2);
  // A value after a quiet spell prints at once.
  p.report(9, 100);
  assert.equal(lines.length, 3);
});

test('progress throttle: flush prints the waiting value before a result, once', () => {
  const clock = fakeTime();
  const lines: string[] = [];
  const p = new ProgressThrottle((l) => lines.push(l), 1000, clock.now, clock.timers);
  p.report(0, 10);
  p.report(3, 10);
  p.flush();
  assert.deepEqual(lines, ['FELIS-FILES-PROGRESS: {"done":0,"total":10}\n', 'FELIS-FILES-PROGRESS: {"done":3,"total":10}\n']);
  assert.equal(clock.pending(), 0, 'the timer is cleared');
  clock.advance(2000);
  p.flush();
  assert.equal(lines.length, 2, 'nothing printed twice');
});

test('progress throttle: done is never printed above the total, and a value just printed is not printed again', () => {
  const clock = fakeTime();
  const lines: string[] = [];
  const p = new ProgressThrottle((l) => lines.push(l), 1000, clock.now, clock.timers);
  p.report(0, 10);
  p.report(12, 10); // a file grew since the total was planned
  p.report(15, 10);
  p.report(10, 10);
  p.flush();
  clock.advance(5000);
  assert.deepEqual(lines, ['FELIS-FILES-PROGRESS: {"done":0,"total":10}\n', 'FELIS-FILES-PROGRESS: {"done":10,"total":10}\n']);
  // Files of no size at a total of 0: one line, not one per file.
  const zero: string[] = [];
  const z = new ProgressThrottle((l) => zero.push(l), 1000, clock.now, clock.timers);
  for (let i = 0; i < 100; i++) z.report(0, 0);
  assert.deepEqual(zero, ['FELIS-FILES-PROGRESS: {"done":0,"total":0}\n']);
});

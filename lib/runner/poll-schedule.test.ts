import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultPrior, LearningSchedule, type PollSchedule } from './poll-schedule.ts';

/**
 * Plays a schedule against containers that start `start` ms after their Job was sent and print
 * their result `window` ms later: the looks made (the Pod list included) and whether one came
 * within the window (the caller then waits for nothing but the stream).
 */
function play(s: PollSchedule, start: number, window = 80): { looks: number; caught: boolean } {
  let t = s.firstLook();
  let looks = 1;
  let notStarted = 0;
  while (t < start) {
    notStarted = t;
    t += s.next('creating', t, 0);
    looks++;
  }
  s.observeStart(notStarted, t);
  return { looks, caught: t <= start + window };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

test('with nothing learned, the first look comes just before the earliest start the prior allows', () => {
  const s = new LearningSchedule();
  const earliest = Math.min(...defaultPrior());
  assert.ok(earliest > 300, `earliest prior start ${earliest}`);
  assert.equal(s.firstLook(), earliest - 70);
});

test('looks are sparse where few starts fall and every 70 ms where they crowd or past all of them', () => {
  const s = new LearningSchedule();
  assert.ok(s.gapAt(500) > 250, `gap at 500 ms: ${s.gapAt(500)}`);
  assert.ok(s.gapAt(500) > s.gapAt(2000), 'the gap shrinks as the remaining starts crowd');
  assert.ok(s.gapAt(2800) <= 150, `gap at 2800 ms: ${s.gapAt(2800)}`);
  assert.equal(s.gapAt(60_000), 70);
});

test('an unscheduled Pod is looked at no more often than every 300 ms; a missing one soon, then less often', () => {
  const s = new LearningSchedule();
  assert.ok(s.next('unscheduled', 2800, 0) >= 300);
  assert.equal(s.next('creating', 2800, 0), s.gapAt(2800));
  assert.equal(s.next('no-pod', 0, 0), 50);
  assert.equal(s.next('no-pod', 500, 500), 200);
});

test('fast starts seen move the first look to the Job itself and make the early looks dense', () => {
  const s = new LearningSchedule();
  for (let i = 0; i < 64; i++) s.observeStart(20, 60);
  assert.equal(s.firstLook(), 0);
  assert.ok(s.gapAt(0) <= 100, `gap at 0: ${s.gapAt(0)}`);
});

test('slow starts seen move the dense looks later, and looking early gets sparse', () => {
  const cold = new LearningSchedule();
  const warm = new LearningSchedule();
  for (let i = 0; i < 64; i++) warm.observeStart(4800 + i * 10, 5000 + i * 10);
  assert.ok(warm.gapAt(2800) > cold.gapAt(2800), `${warm.gapAt(2800)} vs ${cold.gapAt(2800)}`);
  assert.ok(warm.gapAt(5000) <= 150, `gap among the seen starts: ${warm.gapAt(5000)}`);
  assert.equal(warm.firstLook(), cold.firstLook(), 'the prior still bounds the first look');
});

test('only the newest starts are kept, and impossible observations are ignored', () => {
  const s = new LearningSchedule({ prior: [], keep: 2 });
  s.observeStart(100, 300);
  s.observeStart(1000, 1200);
  s.observeStart(2000, 2200);
  s.observeStart(500, 400);
  s.observeStart(Number.NaN, 10);
  assert.deepEqual(s.samples(), [1100, 2100]);
});

test('with nothing learned, no samples at all, the runner looks at once and then every 70 ms', () => {
  const s = new LearningSchedule({ prior: [] });
  assert.equal(s.firstLook(), 0);
  assert.equal(s.gapAt(1234), 70);
});

test('against starts drawn like the benchmark, a fresh schedule is in time for most with half the looks of a fixed 120 ms poll', () => {
  // Unscheduled 50–500 ms then creating 300–2500 ms, on an even grid offset from the prior's.
  const starts: number[] = [];
  for (let i = 0; i < 7; i++) for (let j = 0; j < 7; j++) starts.push(50 + 450 * (i / 6) + 300 + 2200 * (j / 6));
  const runs = starts.map((t) => play(new LearningSchedule(), t));
  const looks = median(runs.map((r) => r.looks));
  const caught = runs.filter((r) => r.caught).length / runs.length;
  assert.ok(looks <= 8, `median looks ${looks}`);
  assert.ok(caught >= 0.55, `in time for ${Math.round(caught * 100)} %`);
  // A fixed 120 ms poll from the Job on (always in time) needs almost twice as many.
  const fixed: PollSchedule = { firstLook: () => 0, next: () => 120, observeStart() {} };
  const fixedLooks = median(starts.map((t) => play(fixed, t).looks));
  assert.ok(fixedLooks >= 1.8 * looks, `${fixedLooks} fixed looks vs ${looks}`);
});

test('a warm schedule that learned from the same kind of starts does as well as a fresh one', () => {
  const warm = new LearningSchedule();
  let x = 1;
  const next = () => (x = (x * 48271) % 2147483647) / 2147483647;
  for (let i = 0; i < 64; i++) play(warm, 50 + 450 * next() + 300 + 2200 * next());
  const starts = Array.from({ length: 101 }, () => 50 + 450 * next() + 300 + 2200 * next());
  const warmRuns = starts.map((t) => play(warm, t));
  const coldRuns = starts.map((t) => play(new LearningSchedule(), t));
  const share = (rs: { caught: boolean }[]) => rs.filter((r) => r.caught).length / rs.length;
  assert.ok(median(warmRuns.map((r) => r.looks)) <= median(coldRuns.map((r) => r.looks)) + 1);
  assert.ok(share(warmRuns) >= share(coldRuns) - 0.1, `${share(warmRuns)} vs ${share(coldRuns)}`);
});

/**
 * `node bench/files-follow.bench.ts [--json] [--runs N] [--burst N]`: a log followed through the
 * files-tail function (its bundle in its own process, as a Knative instance; the embedded cluster
 * in this one, the follow Job's program in its own, as the kubelet runs it). Each run opens a
 * follow of `logs/latest.log` with `lines=1`, appends one marked line and waits for its event,
 * then appends `--burst` lines (10,000 by default) at once and waits for the last, then hangs up.
 * Reported: request to `200` headers (the follow Job's creation and its Pod's start), append to
 * event (the Job polls the file's size every 250 ms, so about half that on average is expected),
 * and the burst's lines per second from append to the last event (the relay's own pace).
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_TOKEN, median, numberArg, startBenchStack } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const RUNS = numberArg(argv, '--runs', 7);
const BURST = numberArg(argv, '--burst', 10_000);
const r1 = (x: number) => Math.round(x * 10) / 10;

const stack = await startBenchStack('follow');
const opens: number[] = [];
const lags: number[] = [];
const bursts: number[] = [];
try {
  const log = join(stack.world, 'logs', 'latest.log');
  mkdirSync(join(stack.world, 'logs'), { recursive: true });
  writeFileSync(log, 'boot\n');
  const fn = await stack.startFunction('files-tail', { ...stack.env, FELIS_JOB_KEY_FILE: stack.keyFile });
  const url = `${fn.url}/api/v1/servers/survival/files/tail?path=logs%2Flatest.log&follow=true&lines=1`;
  for (let i = 0; i <= RUNS; i++) {
    const ac = new AbortController();
    const t0 = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${BENCH_TOKEN}` }, signal: ac.signal });
    if (res.status !== 200) throw new Error(`follow: ${res.status} ${await res.text()}`);
    const opened = performance.now() - t0;
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let seen = '';
    const until = async (mark: string) => {
      while (!seen.includes(mark)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the follow ended before ${mark}`);
        // Only the tail is kept: the mark is looked for in what came last.
        seen = (seen + dec.decode(value, { stream: true })).slice(-4096);
      }
    };
    const mark = `mark-${i}-${Date.now()}`;
    const t1 = performance.now();
    appendFileSync(log, `${mark}\n`);
    await until(mark);
    const lag = performance.now() - t1;
    const last = `burst-end-${i}`;
    const lines = Array.from({ length: BURST - 1 }, (_, n) => `[12:00:00] [Server thread/INFO]: burst ${i} line ${n}`);
    const t2 = performance.now();
    appendFileSync(log, `${lines.join('\n')}\n${last}\n`);
    await until(last);
    const burstMs = performance.now() - t2;
    ac.abort();
    // The first run warms the bundle and the program up.
    if (i > 0) {
      opens.push(opened);
      lags.push(lag);
      bursts.push(burstMs);
    }
    if (!asJson) process.stderr.write('.');
    // The hung-up Job ends on its own; one follow at a time stays within the limit of 2.
    await new Promise((ok) => setTimeout(ok, 500));
  }
} finally {
  await stack.close();
}

const out = {
  follow_open_ms: r1(median(opens)),
  follow_append_to_event_ms: r1(median(lags)),
  follow_burst_lines: BURST,
  follow_burst_lines_s: Math.round(BURST / (median(bursts) / 1000)),
  follow_runs: RUNS,
};
if (asJson) console.log(JSON.stringify(out));
else {
  console.log(`\nfiles/tail?follow=true through files-tail, ${RUNS} runs (medians)`);
  console.log(`  request to 200 headers: ${out.follow_open_ms} ms (the follow Job's creation and start)`);
  console.log(`  append to event: ${out.follow_append_to_event_ms} ms (the Job polls the size every 250 ms; min ${r1(Math.min(...lags))}, max ${r1(Math.max(...lags))})`);
  console.log(`  a burst of ${BURST} lines: ${out.follow_burst_lines_s} lines/s to the last event`);
}

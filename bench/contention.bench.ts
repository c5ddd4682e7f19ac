/**
 * `node bench/contention.bench.ts [--json] [--writers N] [--seconds S] [--quick]`: many writers on
 * one server's world, as a demanding user's load test does. Each writer PUTs its own small file
 * (`PUT .../file`, a sync write Job each) in a loop for S seconds, sending the next request as soon
 * as the last one is answered, whatever the answer. Defaults: 16 writers, 60 s a round; `--quick` is
 * 4 writers × 10 s.
 *
 * Rounds, one after the other on the same stack, each files-write bundle in its own process as a
 * Knative instance would be (the cluster runs in this one):
 * - changes that join (the default, FELIS_JOIN_CHANGES=on): one writer alone, then N writers. Keys
 *   `contention_single_mutations_s`, `contention_mutations_s` (target: at least the single writer's),
 *   `contention_ratio` (the two divided), `contention_409` and `contention_5xx` (targets: 0), the
 *   medians of a success (`contention_single_ok_p50_ms`, `contention_ok_p50_ms`) and the 95th
 *   percentile of the N writers' (`contention_ok_p95_ms`: the wait in line);
 * - Felis's rule (FELIS_JOIN_CHANGES=off), for comparison: N writers (`contention_felis_mutations_s`,
 *   `contention_felis_409`, `contention_felis_refusal_p50_ms`), and N writers that send
 *   `Prefer: wait=10` (`contention_felis_wait_mutations_s`, `contention_felis_wait_409`).
 * `contention_errors` counts requests that got no answer in any round.
 */
import { createHash } from 'node:crypto';
import { BENCH_TOKEN, median, numberArg, startBenchStack } from './support.ts';

function p95(xs: number[]): number {
  if (xs.length === 0) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)]!;
}

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const quick = argv.includes('--quick');
const WRITERS = numberArg(argv, '--writers', quick ? 4 : 16);
const SECONDS = numberArg(argv, '--seconds', quick ? 10 : 60);
if (!(WRITERS >= 1 && Number.isInteger(WRITERS)) || !(SECONDS > 0)) throw new Error('--writers takes a whole number ≥ 1, --seconds a number > 0');
const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;

interface Round {
  ok: number;
  refused: number;
  server5xx: number;
  other: number;
  errors: number;
  okMs: number[];
  refusedMs: number[];
  elapsedS: number;
}

async function round(url: string, writers: number, seconds: number, prefer: string | undefined): Promise<Round> {
  const r: Round = { ok: 0, refused: 0, server5xx: 0, other: 0, errors: 0, okMs: [], refusedMs: [], elapsedS: 0 };
  const start = performance.now();
  const end = start + seconds * 1000;
  const writer = async (i: number) => {
    for (let n = 0; performance.now() < end; n++) {
      const content = Buffer.from(`writer ${i} write ${n}\n`);
      const body = JSON.stringify({ content: content.toString('base64'), content_sha256: createHash('sha256').update(content).digest('hex') });
      const t0 = performance.now();
      try {
        const res = await fetch(`${url}/api/v1/servers/survival/file?path=bench-${i}.txt`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json', ...(prefer ? { prefer } : {}) },
          body,
          signal: AbortSignal.timeout(120_000),
        });
        await res.arrayBuffer();
        const ms = performance.now() - t0;
        if (res.status === 200) {
          r.ok++;
          r.okMs.push(ms);
        } else if (res.status === 409) {
          r.refused++;
          r.refusedMs.push(ms);
        } else if (res.status >= 500) r.server5xx++;
        else r.other++;
      } catch {
        r.errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: writers }, (_, i) => writer(i)));
  r.elapsedS = (performance.now() - start) / 1000;
  return r;
}

const stack = await startBenchStack('contention');
const out: Record<string, unknown> = {};
try {
  const fn = await stack.startFunction('files-write', stack.env);
  // One write first, so the first round does not pay for a cold function.
  await round(fn.url, 1, 0.001, undefined);
  const single = await round(fn.url, 1, SECONDS, undefined);
  if (!asJson) process.stderr.write('.');
  const many = await round(fn.url, WRITERS, SECONDS, undefined);
  if (!asJson) process.stderr.write('.');
  const felisFn = await stack.startFunction('files-write', { ...stack.env, FELIS_JOIN_CHANGES: 'off' });
  await round(felisFn.url, 1, 0.001, undefined);
  const felis = await round(felisFn.url, WRITERS, SECONDS, undefined);
  if (!asJson) process.stderr.write('.');
  const felisWait = await round(felisFn.url, WRITERS, SECONDS, 'wait=10');
  if (!asJson) process.stderr.write('.\n');
  const rate = (x: Round) => r2(x.ok / x.elapsedS);
  out.contention_writers = WRITERS;
  out.contention_seconds = SECONDS;
  out.contention_single_mutations_s = rate(single);
  out.contention_mutations_s = rate(many);
  out.contention_ratio = r2(rate(many) / Math.max(0.01, rate(single)));
  out.contention_409 = many.refused;
  out.contention_5xx = single.server5xx + many.server5xx + felis.server5xx + felisWait.server5xx;
  out.contention_single_ok_p50_ms = r1(median(single.okMs));
  out.contention_ok_p50_ms = r1(median(many.okMs));
  out.contention_ok_p95_ms = r1(p95(many.okMs));
  out.contention_felis_mutations_s = rate(felis);
  out.contention_felis_409 = felis.refused;
  out.contention_felis_refusal_p50_ms = r1(median(felis.refusedMs));
  out.contention_felis_wait_mutations_s = rate(felisWait);
  out.contention_felis_wait_409 = felisWait.refused;
  out.contention_other_4xx = single.other + many.other + felis.other + felisWait.other;
  out.contention_errors = single.errors + many.errors + felis.errors + felisWait.errors;
} finally {
  await stack.close();
}
if (asJson) console.log(JSON.stringify(out));
else {
  console.log(`contention (${out.contention_writers} writers × ${out.contention_seconds} s, sync writes to one server):`);
  console.log(
    `  changes that join: one writer ${out.contention_single_mutations_s} writes/s (p50 ${out.contention_single_ok_p50_ms} ms); ${out.contention_writers} writers ${out.contention_mutations_s} writes/s (${out.contention_ratio}×; p50 ${out.contention_ok_p50_ms} ms, p95 ${out.contention_ok_p95_ms} ms); 409: ${out.contention_409}`,
  );
  console.log(
    `  Felis's rule: ${out.contention_writers} writers ${out.contention_felis_mutations_s} writes/s, ${out.contention_felis_409} refused (p50 ${out.contention_felis_refusal_p50_ms} ms); with Prefer: wait=10 ${out.contention_felis_wait_mutations_s} writes/s, ${out.contention_felis_wait_409} refused`,
  );
  console.log(`  5xx: ${out.contention_5xx}; other 4xx: ${out.contention_other_4xx}; no answer: ${out.contention_errors}`);
}

/**
 * `node bench/browse.bench.ts [--json] [--runs N] [--stages]`: a read of server.properties through
 * the files-read function, end to end over HTTP, with a browse session up (warm: the session Pod
 * is serving) and as a one-shot Job (the function without a job key), side by side. The embedded
 * cluster runs in this process; each function bundle runs in its own process, as a Knative
 * instance would. Reads are interleaved between the two, so a busy machine skews both alike.
 *
 * `--stages` adds where a warm read's time goes: the same route in this process (with the
 * cluster, so on one event loop), its Kubernetes reads and its call to the Pod timed one by one.
 */
import { warmReadStages } from './browse-stages.ts';
import { BENCH_TOKEN, median, numberArg, startBenchStack } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const withStages = argv.includes('--stages');
const RUNS = numberArg(argv, '--runs', 20);
const PATH = '/api/v1/servers/survival/file?path=server.properties';

const r1 = (x: number) => Math.round(x * 10) / 10;

/** One read, timed from request to the last byte of the answer. */
async function read(url: string): Promise<{ ms: number; body: string }> {
  const t0 = performance.now();
  const res = await fetch(url + PATH, { headers: { authorization: `Bearer ${BENCH_TOKEN}` }, signal: AbortSignal.timeout(60_000) });
  const body = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`read: ${res.status} ${body}`);
  return { ms, body };
}

const t = performance.now();
const stack = await startBenchStack('browse');
const browse: number[] = [];
const oneShot: number[] = [];
let firstMs = 0;
let stages: Record<string, number> | undefined;
try {
  const withSession = await stack.startFunction('files-read', { ...stack.env, FELIS_JOB_KEY_FILE: stack.keyFile });
  const withoutSession = await stack.startFunction('files-read', stack.env);

  // The first read starts the session; wait until reads come from it before measuring "warm".
  const first = await read(withSession.url);
  firstMs = first.ms;
  const warmUntil = performance.now() + 30_000;
  for (;;) {
    const r = await read(withSession.url);
    if (r.body !== first.body) throw new Error('a session read differs from the first read');
    if (r.ms < 200) break;
    if (performance.now() > warmUntil) throw new Error('the session never came up');
  }
  await read(withoutSession.url);
  for (let i = 0; i < RUNS; i++) {
    const b = await read(withSession.url);
    const o = await read(withoutSession.url);
    if (b.body !== o.body) throw new Error('a session read and a one-shot read differ');
    browse.push(b.ms);
    oneShot.push(o.ms);
    if (!asJson) process.stderr.write('.');
  }
  if (withStages) stages = await warmReadStages({ kubeconfig: stack.env.KUBECONFIG!, keyFile: stack.keyFile, token: BENCH_TOKEN, runs: Math.max(RUNS, 40) });
} finally {
  await stack.close();
}

const warm = median(browse);
const cold = median(oneShot);
const out = {
  browse_read_ms_p50_warm: r1(warm),
  oneshot_read_ms_p50: r1(cold),
  browse_speedup_vs_oneshot: r1(cold / warm),
  browse_first_read_ms: r1(firstMs),
  ...(stages ? { browse_warm_stages_ms_p50: stages } : {}),
};
if (asJson) {
  console.log(JSON.stringify(out));
} else {
  process.stderr.write('\n');
  console.log(`files-read, ${RUNS} reads each, interleaved (${r1((performance.now() - t) / 1000)} s in all)`);
  console.log(`  through a warm browse session  p50 ${out.browse_read_ms_p50_warm} ms`);
  console.log(`  as a one-shot Job               p50 ${out.oneshot_read_ms_p50} ms`);
  console.log(`  speed-up                        ${out.browse_speedup_vs_oneshot}x (first read, which starts the session: ${out.browse_first_read_ms} ms)`);
  if (stages) {
    console.log('  a warm read in one process, by stage (p50 ms; the two Kubernetes reads overlap):');
    for (const [k, v] of Object.entries(stages)) console.log(`    ${k.padEnd(28)} ${v}`);
  }
}

/**
 * `node bench/edit.bench.ts [--json] [--runs N]`: a small change (write, mkdir, rename, delete)
 * end to end over HTTP, made by an edit session Pod (warm: the session is serving) and by a one-shot
 * Job (the same function with FELIS_EDIT_SESSIONS=off), side by side on one embedded cluster in
 * this process, each function bundle in its own process as a Knative instance would be. Changes
 * are interleaved between the two, so a busy machine skews both alike. Both paths take and give
 * back the world lock around the change.
 *
 * Keys: `warm_<op>_ms_p50` and `oneshot_<op>_ms_p50` for each op, `warm_write_speedup` (one-shot
 * p50 / warm p50), `warm_first_write_ms` (the write that found no session and started one).
 */
import { createHash } from 'node:crypto';
import { BENCH_TOKEN, median, numberArg, startBenchStack } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const RUNS = numberArg(argv, '--runs', 20);
const S = '/api/v1/servers/survival';
const r1 = (x: number) => Math.round(x * 10) / 10;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

async function call(url: string, method: string, path: string, body?: unknown): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${BENCH_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200 && res.status !== 201) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return ms;
}
const write = (name: string) => ({ content: Buffer.from(`${name}\n`).toString('base64'), content_sha256: sha(`${name}\n`) });

type Op = 'write' | 'mkdir' | 'rename' | 'delete';
const OPS: Op[] = ['write', 'mkdir', 'rename', 'delete'];
const FUNCTION: Record<Op, string> = { write: 'files-write', mkdir: 'files-mkdir', rename: 'files-rename', delete: 'files-delete' };

const stack = await startBenchStack('edit');
const times: Record<'warm' | 'oneshot', Record<Op, number[]>> = { warm: { write: [], mkdir: [], rename: [], delete: [] }, oneshot: { write: [], mkdir: [], rename: [], delete: [] } };
let firstMs = 0;
try {
  const keyed = { ...stack.env, FELIS_JOB_KEY_FILE: stack.keyFile };
  const urls = { warm: {} as Record<Op, string>, oneshot: {} as Record<Op, string> };
  for (const op of OPS) {
    urls.warm[op] = (await stack.startFunction(FUNCTION[op], keyed)).url;
    urls.oneshot[op] = (await stack.startFunction(FUNCTION[op], { ...keyed, FELIS_EDIT_SESSIONS: 'off' })).url;
  }
  // The first write starts the session; later ones are made by it once it serves.
  firstMs = await call(urls.warm.write, 'PUT', `${S}/file?path=warm-up.txt`, write('warm-up'));
  const until = performance.now() + 30_000;
  while ((await call(urls.warm.write, 'PUT', `${S}/file?path=warm-up.txt`, write('warm-up'))) > 150) {
    if (performance.now() > until) throw new Error('the edit session never came up');
  }
  // Each function's own first call (its client, its hint) is not what is measured.
  for (const kind of ['warm', 'oneshot'] as const) {
    await call(urls[kind].mkdir, 'POST', `${S}/files/mkdir?path=first-${kind}`);
    await call(urls[kind].rename, 'POST', `${S}/files/rename?path=first-${kind}`, { to: `first-${kind}-r` });
    await call(urls[kind].delete, 'DELETE', `${S}/file?path=first-${kind}-r`);
  }
  for (let i = 0; i < RUNS; i++) {
    for (const kind of ['warm', 'oneshot'] as const) {
      const n = `${kind}-${i}`;
      const u = urls[kind];
      times[kind].write.push(await call(u.write, 'PUT', `${S}/file?path=${n}.txt`, write(n)));
      times[kind].mkdir.push(await call(u.mkdir, 'POST', `${S}/files/mkdir?path=${n}-dir`));
      times[kind].rename.push(await call(u.rename, 'POST', `${S}/files/rename?path=${n}.txt`, { to: `${n}-dir/${n}.txt` }));
      times[kind].delete.push(await call(u.delete, 'DELETE', `${S}/file?path=${n}-dir`));
    }
    if (!asJson) process.stderr.write('.');
  }
} finally {
  await stack.close();
}

const out: Record<string, number> = { warm_first_write_ms: r1(firstMs) };
for (const op of OPS) {
  out[`warm_${op}_ms_p50`] = r1(median(times.warm[op]));
  out[`oneshot_${op}_ms_p50`] = r1(median(times.oneshot[op]));
}
out.warm_write_speedup = r1(out.oneshot_write_ms_p50! / out.warm_write_ms_p50!);
if (asJson) console.log(JSON.stringify(out));
else {
  console.log(`\nsmall changes, ${RUNS} of each, p50 ms (warm: edit session; one-shot: a Job each)`);
  console.log('| op | warm | one-shot |\n| --- | ---: | ---: |');
  for (const op of OPS) console.log(`| ${op} | ${out[`warm_${op}_ms_p50`]} | ${out[`oneshot_${op}_ms_p50`]} |`);
  console.log(`first write (starts the session): ${out.warm_first_write_ms} ms; warm write ${out.warm_write_speedup}× faster than a one-shot write`);
}

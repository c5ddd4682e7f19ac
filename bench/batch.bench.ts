/**
 * `node bench/batch.bench.ts [--json] [--files N]`: deleting N files (default 1000) in one
 * `POST .../files/delete` (one Job) beside N single `DELETE .../file` calls (a Job each), on the
 * embedded stack, the files-batch and files-delete bundles each in their own process as Knative
 * instances would run.
 *
 * Keys: `batch_delete_1000_ms` (the one call; named for the default size, `batch_delete_files`
 * says the size run), `single_delete_1000_ms` (the N single calls, one after the other) and
 * `batch_delete_speedup` (their ratio; the target is ≥ 50).
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_TOKEN, numberArg, startBenchStack } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const N = numberArg(argv, '--files', 1000);
if (!(N >= 1 && N <= 1000 && Number.isInteger(N))) throw new Error('--files takes a whole number from 1 to 1000 (one batch holds at most 1000)');
const r1 = (x: number) => Math.round(x * 10) / 10;

async function call(url: string, method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${BENCH_TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
}

function seed(world: string, folder: string): string[] {
  mkdirSync(join(world, folder), { recursive: true });
  const paths = Array.from({ length: N }, (_, i) => `${folder}/${i}.log.gz`);
  for (const p of paths) writeFileSync(join(world, p), 'an old log\n');
  return paths;
}

const stack = await startBenchStack('batch');
const out: Record<string, unknown> = {};
try {
  const batchFn = await stack.startFunction('files-batch', stack.env);
  const singleFn = await stack.startFunction('files-delete', stack.env);
  // One call of each first, so neither side pays for a cold function.
  seed(stack.world, 'warm');
  await call(batchFn.url, 'POST', '/api/v1/servers/survival/files/delete', { paths: ['warm/0.log.gz'] });
  await call(singleFn.url, 'DELETE', `/api/v1/servers/survival/file?path=${encodeURIComponent('warm/1.log.gz')}`);

  const batchPaths = seed(stack.world, 'batch-logs');
  const t0 = performance.now();
  await call(batchFn.url, 'POST', '/api/v1/servers/survival/files/delete', { paths: batchPaths });
  const batchMs = performance.now() - t0;
  if (readdirSync(join(stack.world, 'batch-logs')).length !== 0) throw new Error('the batch left files behind');
  if (!asJson) process.stderr.write('.');

  const singlePaths = seed(stack.world, 'single-logs');
  const t1 = performance.now();
  for (const p of singlePaths) await call(singleFn.url, 'DELETE', `/api/v1/servers/survival/file?path=${encodeURIComponent(p)}`);
  const singleMs = performance.now() - t1;
  if (!asJson) process.stderr.write('.\n');

  out.batch_delete_files = N;
  out.batch_delete_1000_ms = r1(batchMs);
  out.single_delete_1000_ms = r1(singleMs);
  out.batch_delete_speedup = r1(singleMs / batchMs);
} finally {
  await stack.close();
}
if (asJson) console.log(JSON.stringify(out));
else {
  console.log(`batch delete (${out.batch_delete_files} files):`);
  console.log(`  one POST files/delete: ${out.batch_delete_1000_ms} ms`);
  console.log(`  ${out.batch_delete_files} single DELETEs: ${out.single_delete_1000_ms} ms`);
  console.log(`  speedup: ${out.batch_delete_speedup}× (target ≥ 50×)`);
}

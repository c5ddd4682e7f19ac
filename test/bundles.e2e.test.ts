/**
 * The bundles `npm run build` makes are what a Knative service runs: start one as its own process
 * with a KUBECONFIG, as production would, call it, and stop it with SIGTERM. Also: the size budget
 * of every function bundle, and a stop that lets an in-flight mutation finish. The image itself is
 * built and run by `npm run test:container` (test/container/).
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { bundleWeight } from '../bench/bundle-size.ts';
import { ANNOTATION_MAINTENANCE } from '../lib/labels.ts';
import { type BundleProcess, startBundleProcess } from './support/bundle-process.ts';
import { getServer } from './support/servers.ts';
import { ROOT, type Stack, startStack, TOKEN } from './support/stack.ts';

let s: Stack;
let kubeconfig: string;
before(async () => {
  s = await startStack();
  kubeconfig = join(s.dataDir, 'function.kubeconfig');
  writeFileSync(kubeconfig, s.cluster.kubeconfigYaml(s.cluster.tokenFor('minecraft', 'felis-world')));
});
after(async () => {
  await s?.close();
});

type Running = BundleProcess;

/** Starts a function bundle as production would (its own process, KUBECONFIG, PORT) and waits for its port. */
function startBundle(bundle: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<Running> {
  assert.ok(existsSync(bundle), `${bundle} exists (npm run build)`);
  return startBundleProcess(bundle, { PATH: process.env.PATH, KUBECONFIG: kubeconfig, PORT: '0', HOST: '127.0.0.1', FELIS_TOKEN: TOKEN, FELIS_IMAGE: 'felis-world/files:dev', ...extraEnv });
}

async function stopBundle(r: Running): Promise<number | null> {
  if (r.child.exitCode !== null) return r.child.exitCode;
  r.child.kill('SIGTERM');
  const [code] = await once(r.child, 'exit');
  return code as number | null;
}

const auth = { authorization: `Bearer ${TOKEN}` };

test('dist/functions/holder.mjs serves with KUBECONFIG and stops cleanly on SIGTERM', { timeout: 30_000 }, async () => {
  const r = await startBundle(join(ROOT, 'dist/functions/holder.mjs'));
  try {
    const health = await fetch(`${r.url}/healthz`);
    assert.equal(health.status, 200);
    const h = await fetch(`${r.url}/api/v1/servers/survival/holder`, { headers: auth });
    assert.equal(h.status, 200, await h.clone().text());
    assert.deepEqual(await h.json(), { held: false });
    const other = await fetch(`${r.url}/api/v1/servers/survival/files`, { headers: auth });
    assert.equal(other.status, 404, 'a function serves only its own routes');
  } finally {
    assert.equal(await stopBundle(r), 0, r.output());
  }
});

test('a function whose Kubernetes configuration cannot load exits non-zero instead of looking healthy', { timeout: 20_000 }, async () => {
  const r = await startBundle(join(ROOT, 'dist/functions/holder.mjs'), { KUBECONFIG: join(s.dataDir, 'no-such.kubeconfig') });
  const [code] = r.child.exitCode !== null ? [r.child.exitCode] : await once(r.child, 'exit');
  assert.equal(code, 1, r.output());
  assert.match(r.output(), /cannot load the Kubernetes client or configuration/);
});

test('a request sent before the routes have loaded waits for them and gets the full answer', { timeout: 30_000 }, async () => {
  const r = await startBundle(join(ROOT, 'dist/functions/holder.mjs'));
  try {
    // No probe first: the request itself starts the loading.
    const h = await fetch(`${r.url}/api/v1/servers/survival/holder`, { headers: auth });
    assert.equal(h.status, 200, await h.clone().text());
    assert.deepEqual(await h.json(), { held: false });
    assert.match(r.output(), /"loaded_ms":\d+/);
    const unauth = await fetch(`${r.url}/api/v1/servers/survival/holder`);
    assert.equal(unauth.status, 401);
  } finally {
    assert.equal(await stopBundle(r), 0, r.output());
  }
});

test('/healthz answers the same before and after the routes load', { timeout: 30_000 }, async () => {
  const r = await startBundle(join(ROOT, 'dist/functions/files-list.mjs'));
  try {
    const first = await fetch(`${r.url}/healthz`);
    const early = { status: first.status, body: await first.text(), type: first.headers.get('content-type'), id: first.headers.get('x-request-id') !== null };
    const deadline = Date.now() + 10_000;
    while (!/"loaded_ms":/.test(r.output())) {
      assert.ok(Date.now() < deadline, r.output());
      await new Promise((res) => setTimeout(res, 10));
    }
    const second = await fetch(`${r.url}/healthz`);
    assert.deepEqual({ status: second.status, body: await second.text(), type: second.headers.get('content-type'), id: second.headers.get('x-request-id') !== null }, early);
    assert.equal(early.status, 200);
  } finally {
    assert.equal(await stopBundle(r), 0, r.output());
  }
});

test('a malformed configuration stops the function before it listens, naming the variable', { timeout: 20_000 }, async () => {
  await assert.rejects(startBundle(join(ROOT, 'dist/functions/holder.mjs'), { FELIS_JOB_TTL_SECONDS: 'soon' }), /exited 1:[\s\S]*invalid configuration FELIS_JOB_TTL_SECONDS/);
});

test('SIGTERM during a write lets the write finish and releases the world lock it took', { timeout: 30_000 }, async () => {
  const r = await startBundle(join(ROOT, 'dist/functions/files-write.mjs'));
  const text = 'written across a stop\n';
  const body = JSON.stringify({ content: Buffer.from(text).toString('base64'), content_sha256: createHash('sha256').update(text).digest('hex') });
  const pending = fetch(`${r.url}/api/v1/servers/survival/file?path=sigterm.txt`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/json' }, body });
  // Stop only once the write holds the lock: from then on it is in flight in every sense.
  const deadline = Date.now() + 10_000;
  while (!(await getServer(s.cluster, 'survival')).metadata.annotations?.[ANNOTATION_MAINTENANCE]) {
    assert.ok(Date.now() < deadline, `the write never took the lock: ${r.output()}`);
    await new Promise((res) => setTimeout(res, 2));
  }
  r.child.kill('SIGTERM');
  const res = await pending;
  assert.equal(res.status, 200, await res.clone().text());
  const [code] = r.child.exitCode !== null ? [r.child.exitCode] : await once(r.child, 'exit');
  assert.equal(code, 0, r.output());
  assert.equal(readFileSync(join(s.world, 'sigterm.txt'), 'utf8'), text);
  assert.equal((await getServer(s.cluster, 'survival')).metadata.annotations?.[ANNOTATION_MAINTENANCE], undefined, 'lock released');
});

// The start-up path (entry and its static imports) is what a woken service loads before its probe
// answers: Hono, its Node adapter, pino, the serving shell and the route table (about 1 KiB a route;
// the routes' prose, collected beside it, is marked pure and dropped: only the document generators read it), while the schemas
// with zod/mini (30 KiB), the handlers or client-node landing on that path fail it.
// The total is every chunk a bundle can load, about 2.3 MiB (client-node 1.2 with undici 0.7, the
// cloudevents SDK 0.07, zod/mini 0.03; the API document is a file beside the bundles, read when
// /openapi.json is asked for, not a chunk): 2.5 MiB holds some growth in routes (about 2 KiB each:
// entry and schema) and fails on any new large dependency, zod's full build (440 KiB) among them.
const STARTUP_BUDGET_KIB = 168;
const TOTAL_BUDGET_KIB = 2560;

test(`every function bundle loads at most ${STARTUP_BUDGET_KIB} KiB before /healthz and ${TOTAL_BUDGET_KIB} KiB in all`, () => {
  const dir = join(ROOT, 'dist/functions');
  const bundles = readdirSync(dir).filter((f) => f.endsWith('.mjs'));
  assert.ok(bundles.length >= 10, `one bundle per function: ${bundles.join(', ')}`);
  for (const b of bundles) {
    const w = bundleWeight(join(dir, b));
    assert.ok(w.startupBytes <= STARTUP_BUDGET_KIB * 1024, `${b}: ${Math.round(w.startupBytes / 1024)} KiB on the start-up path`);
    assert.ok(w.totalBytes <= TOTAL_BUDGET_KIB * 1024, `${b}: ${Math.round(w.totalBytes / 1024)} KiB in all`);
    assert.ok(w.totalBytes - w.startupBytes > 2048 * 1024, `${b}: the routes and the Kubernetes client are loaded on demand, not at start`);
  }
});

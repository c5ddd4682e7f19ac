/**
 * The bundles `npm run build` makes are what a Knative service runs: start one as its own process
 * with a KUBECONFIG, as production would, call it, and stop it with SIGTERM. Also: the image's
 * layout (the Dockerfile's runtime steps performed into a directory, then made read-only), the
 * size budget of every function bundle, and a stop that lets an in-flight mutation finish.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { startStack, ROOT, TOKEN, type Stack } from './support/stack.ts';
import { getServer } from './support/servers.ts';
import { ANNOTATION_MAINTENANCE } from '../lib/labels.ts';
import { bundleWeight } from '../bench/bundle-size.ts';

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

interface Running {
  child: ChildProcess;
  url: string;
  output(): string;
}

/** Starts a function bundle as production would (its own process, KUBECONFIG, PORT) and waits for its port. */
async function startBundle(bundle: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<Running> {
  assert.ok(existsSync(bundle), `${bundle} exists (npm run build)`);
  const child = spawn(process.execPath, [bundle], {
    env: { PATH: process.env.PATH, KUBECONFIG: kubeconfig, PORT: '0', HOST: '127.0.0.1', FELIS_TOKEN: TOKEN, FELIS_IMAGE: 'felis-world/files:dev', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr!.on('data', (d) => (out += d));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line: ${out}`)), 15_000);
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /"port":(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  return { child, url: `http://127.0.0.1:${port}`, output: () => out };
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
// answers: Hono, zod, pino and our code, about 630 KiB today, a fifth of it headroom here. Putting
// client-node back on that path (over 1 MiB more) fails it. The total is what the first request
// loads: today about 2.6 MiB, most of it client-node and undici.
const STARTUP_BUDGET_KIB = 768;
const TOTAL_BUDGET_KIB = 3072;

test(`every function bundle loads at most ${STARTUP_BUDGET_KIB} KiB before /healthz and ${TOTAL_BUDGET_KIB} KiB in all`, () => {
  const dir = join(ROOT, 'dist/functions');
  const bundles = readdirSync(dir).filter((f) => f.endsWith('.mjs'));
  assert.ok(bundles.length >= 10, `one bundle per function: ${bundles.join(', ')}`);
  for (const b of bundles) {
    const w = bundleWeight(join(dir, b));
    assert.ok(w.startupBytes <= STARTUP_BUDGET_KIB * 1024, `${b}: ${Math.round(w.startupBytes / 1024)} KiB on the start-up path`);
    assert.ok(w.totalBytes <= TOTAL_BUDGET_KIB * 1024, `${b}: ${Math.round(w.totalBytes / 1024)} KiB in all`);
    assert.ok(w.totalBytes > w.startupBytes, `${b}: the Kubernetes client is loaded on demand, not at start`);
  }
});

/** The runtime stage's `COPY --from=build [--chmod=m] <src> <dst>` steps, and its USER. */
function runtimeSteps(dockerfile: string): { from: string; copies: { src: string; dst: string; chmod?: number }[]; user?: string; runs: string[] } {
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const last = stages[stages.length - 1]!;
  const lines = last.replace(/\\\n/g, ' ').split('\n');
  const copies = [];
  const runs = [];
  let user: string | undefined;
  for (const l of lines) {
    const copy = /^COPY\s+--from=build\s+(?:--chmod=(\d+)\s+)?(\S+)\s+(\S+)\s*$/.exec(l);
    if (copy) copies.push({ src: copy[2]!, dst: copy[3]!, chmod: copy[1] ? parseInt(copy[1], 8) : undefined });
    else if (/^COPY\b/.test(l)) throw new Error(`a runtime COPY this test cannot perform: ${l}`);
    const run = /^RUN\s+(.*)$/.exec(l);
    if (run) runs.push(run[1]!);
    const u = /^USER\s+(\S+)/.exec(l);
    if (u) user = u[1];
  }
  return { from: lines[0]!.trim(), copies, user, runs };
}

test('the image: the Dockerfile runtime steps give a read-only tree whose function bundles and /usr/local/bin/felis run', { timeout: 60_000 }, async () => {
  const steps = runtimeSteps(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  assert.match(steps.from, /^node:24[\w.-]*-slim$/, 'Node 24 slim');
  assert.ok(steps.user && !/^(0|root)(:|$)/.test(steps.user), `runs as a non-root user: ${steps.user}`);
  const image = mkdtempSync(join(tmpdir(), 'felis-image-'));
  try {
    // The build stage's /src is this checkout after `npm run build`, its source maps deleted.
    for (const c of steps.copies) {
      assert.ok(c.src.startsWith('/src/'), c.src);
      const src = join(ROOT, c.src.slice('/src/'.length));
      const dst = join(image, c.dst);
      mkdirSync(dirname(dst), { recursive: true });
      cpSync(src, dst, { recursive: true, filter: (f) => !f.endsWith('.map') });
      if (c.chmod !== undefined) chmodSync(dst, c.chmod);
    }
    // RUN steps at build time (e.g. preparing caches) with `node` and the image's own paths.
    for (const run of steps.runs) {
      const cmd = run.replace(/(^|\s)\/(app|usr)\//g, (_m, sp: string, top: string) => `${sp}${image}/${top}/`);
      const r = spawnSync('sh', ['-c', cmd], { env: { PATH: `${dirname(process.execPath)}:${process.env.PATH}` }, encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, `RUN ${run}: ${r.stdout}${r.stderr}`);
    }
    // Read-only from here on, as with readOnlyRootFilesystem: nothing may need writing at run time.
    const lock = (p: string) => {
      const st = statSync(p);
      if (st.isDirectory()) for (const e of readdirSync(p)) lock(join(p, e));
      chmodSync(p, st.mode & 0o555);
    };
    lock(image);
    const felis = join(image, 'usr/local/bin/felis');
    assert.ok(statSync(felis).mode & 0o111, 'felis is executable');
    assert.match(readFileSync(felis, 'utf8'), /^#!\/usr\/bin\/env node\n/);
    // Run by its path, as the Job's command does: the shebang finds node on PATH.
    const help = spawnSync(felis, ['files', '-h'], { env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin` }, encoding: 'utf8', cwd: tmpdir() });
    assert.match(help.stdout + help.stderr, /usage: felis files/);
    // No node_modules beside the bundles: everything they load is inside the image tree.
    const r = await startBundle(join(image, 'app/functions/holder.mjs'), { NODE_PATH: '' });
    try {
      assert.equal((await fetch(`${r.url}/healthz`)).status, 200);
      const h = await fetch(`${r.url}/api/v1/servers/survival/holder`, { headers: auth });
      assert.equal(h.status, 200, await h.clone().text());
    } finally {
      assert.equal(await stopBundle(r), 0, r.output());
    }
  } finally {
    const unlock = (p: string) => {
      chmodSync(p, 0o755);
      if (statSync(p).isDirectory()) for (const e of readdirSync(p)) unlock(join(p, e));
    };
    unlock(image);
    rmSync(image, { recursive: true, force: true });
  }
});

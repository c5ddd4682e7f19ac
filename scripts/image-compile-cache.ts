/**
 * Fills Node's compile cache for the image, at image build time: `node image-compile-cache.mjs
 * <functions dir> <felis program>` with NODE_COMPILE_CACHE set (bundled to
 * dist/image-compile-cache.mjs; the Dockerfile runs it in the final stage).
 *
 * The image's root filesystem is read-only, so the cache must exist before the container does,
 * and Node keys it by the files' paths and the user's id: this runs from the image's own paths,
 * as the image's user. It starts every function bundle the way Knative does (its own process,
 * PORT, a kubeconfig naming no real API server), asks its probe, waits until it has loaded its
 * routes and the Kubernetes client (it logs `loaded_ms`), stops it with SIGTERM (Node writes the
 * cache as the process exits), then runs the file Job program once on an empty world. Everything else it writes goes to a temporary directory it
 * removes. Only node: built-ins here: the image has no node_modules.
 * @module
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** A kubeconfig that loads; nothing calls the API server it names. */
const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: none, user: {token: none}}]
contexts: [{name: none, context: {cluster: none, user: none, namespace: none}}]
current-context: none
`;

/** Starts one function bundle, loads everything a first request loads, and stops it. */
export async function warmFunction(bundle: string, env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<void> {
  const child = spawn(process.execPath, [bundle], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr.on('data', (d) => (out += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('exit', (code, signal) => reject(new Error(`${bundle} exited (${code ?? signal}) before listening: ${out}`)));
      child.stdout.on('data', (d: Buffer) => {
        out += d;
        const m = /"port":(\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
    });
    const probe = await fetch(`http://127.0.0.1:${port}/healthz`);
    await probe.arrayBuffer();
    if (probe.status !== 200) throw new Error(`${bundle}: /healthz answered ${probe.status}`);
    // The probe starts the loading of the routes and of the Kubernetes client; wait for both.
    if (!/"loaded_ms":/.test(out)) {
      await new Promise<void>((resolve, reject) => {
        child.once('exit', (code, signal) => reject(new Error(`${bundle} exited (${code ?? signal}) while loading: ${out}`)));
        child.stdout.on('data', () => /"loaded_ms":/.test(out) && resolve());
      });
    }
    child.kill('SIGTERM');
    const [code] = child.exitCode !== null ? [child.exitCode] : await once(child, 'exit');
    if (code !== 0) throw new Error(`${bundle}: exited ${code} on SIGTERM: ${out}`);
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  }
}

/** Warms every `<name>.mjs` in `functionsDir` and the Job program; returns the names warmed. */
export async function warmImage(functionsDir: string, felis: string, baseEnv: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  if (!baseEnv.NODE_COMPILE_CACHE) throw new Error('NODE_COMPILE_CACHE is not set: there is no cache to fill');
  const scratch = mkdtempSync(join(tmpdir(), 'felis-compile-cache-'));
  try {
    const kubeconfig = join(scratch, 'kubeconfig');
    writeFileSync(kubeconfig, KUBECONFIG);
    const env: NodeJS.ProcessEnv = {
      PATH: baseEnv.PATH,
      NODE_COMPILE_CACHE: baseEnv.NODE_COMPILE_CACHE,
      PORT: '0',
      HOST: '127.0.0.1',
      KUBECONFIG: kubeconfig,
      FELIS_TOKEN: 'compile-cache-warmup',
      FELIS_IMAGE: 'compile-cache-warmup',
      LOG_LEVEL: 'info',
    };
    const functions = readdirSync(functionsDir)
      .filter((f) => f.endsWith('.mjs'))
      .sort();
    if (functions.length === 0) throw new Error(`no function bundles in ${functionsDir}`);
    // One at a time: the image build may have a single core, and each start is short.
    for (const f of functions) await warmFunction(join(functionsDir, f), env);
    const world = join(scratch, 'world');
    mkdirSync(join(world, 'config'), { recursive: true });
    const job = spawnSync(felis, ['files', '--op', 'list', '--path', '', '--worlds-root', world], { env, cwd: scratch, encoding: 'utf8', timeout: 30_000 });
    if (job.status !== 0 || !job.stdout.includes('FELIS-FILES-RESULT: ')) throw new Error(`${felis} files --op list failed (${job.error?.message ?? job.status}): ${job.stdout}${job.stderr}`);
    return [...functions.map((f) => f.slice(0, -'.mjs'.length)), 'felis'];
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [functionsDir, felis] = process.argv.slice(2);
  if (!functionsDir || !felis) {
    console.error('usage: NODE_COMPILE_CACHE=<dir> node image-compile-cache.mjs <functions dir> <felis program>');
    process.exit(2);
  }
  const t = performance.now();
  const warmed = await warmImage(resolve(functionsDir), resolve(felis));
  console.log(`compile cache in ${process.env.NODE_COMPILE_CACHE} filled by ${warmed.length} programs in ${Math.round(performance.now() - t)} ms: ${warmed.join(', ')}`);
}

/**
 * What the benches share: medians, their flags, the client they use, and a stack of the embedded
 * cluster with function bundles started in their own processes, as Knative instances would run.
 * @module
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster } from '../cluster/index.ts';
import { buildAll } from '../scripts/build.ts';
import { seedDemoWorld } from '../scripts/demo-world.ts';
import { type BundleProcess, startBundleProcess } from '../test/support/bundle-process.ts';
import { createServer, STOPPED } from '../test/support/servers.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The median (0 for none). */
/** mulberry32: a small seeded PRNG, so every run of a bench draws the same numbers. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Writes a file of `bytes` incompressible bytes in 4 MiB blocks (random once per call, each block
 * stamped with its offset so no two are alike).
 */
export function writeRandomFile(path: string, bytes: number): void {
  const fd = openSync(path, 'w');
  try {
    const block = randomBytes(4 << 20);
    for (let off = 0; off < bytes; off += block.length) {
      block.writeUInt32LE(off >>> 0, 0);
      writeSync(fd, block, 0, Math.min(block.length, bytes - off));
    }
  } finally {
    closeSync(fd);
  }
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? 0 : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The `p` quantile, nearest rank (0 for none). */
export function quantile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]!;
}

/** `--name N` from `argv`, else `fallback`. */
export function numberArg(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
}

/** Whether curl is the client: it is, unless it is absent or `--node-client` is given. */
export function curlClient(argv: string[]): boolean {
  if (argv.includes('--node-client')) return false;
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The bearer token every bench's functions accept. */
export const BENCH_TOKEN = 'bench-token-0123456789';

export interface BenchStack {
  /** The cluster's data folder, on the same disk as the world. */
  dataDir: string;
  /** The world folder of the stopped server `survival`. */
  world: string;
  cluster: Awaited<ReturnType<typeof startCluster>>;
  /** A key file for browse-session and receiver tokens. */
  keyFile: string;
  /**
   * A function's environment: the cluster as the function's own identity, the bench token, the
   * dev image. Add `FELIS_JOB_KEY_FILE: keyFile` where sessions, uploads or downloads are wanted.
   */
  env: NodeJS.ProcessEnv;
  /** Starts `dist/functions/<name>.mjs` with `env`; it is stopped by `close`. */
  startFunction(name: string, env: NodeJS.ProcessEnv): Promise<BundleProcess>;
  /** Stops the functions and the cluster, and removes the data folder. */
  close(): Promise<void>;
}

/** Builds the bundles, then starts the embedded cluster with the stopped server `survival`. */
export async function startBenchStack(name: string): Promise<BenchStack> {
  await buildAll();
  const dataDir = mkdtempSync(join(tmpdir(), `felis-${name}-bench-`));
  const world = seedDemoWorld(dataDir, 'survival');
  const cluster = await startCluster({ dataDir, rbacManifest: join(root, 'knative/rbac.yaml') });
  const children: ChildProcess[] = [];
  const close = async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode === null && c.signalCode === null ? once(c, 'exit') : undefined)));
    await cluster.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await createServer(cluster, 'survival', STOPPED);
    const kubeconfig = join(dataDir, 'function.kubeconfig');
    writeFileSync(kubeconfig, cluster.kubeconfigYaml(cluster.tokenFor('minecraft', 'felis-world')));
    const keyFile = join(dataDir, 'job-key');
    writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
    const env = { PATH: process.env.PATH, KUBECONFIG: kubeconfig, PORT: '0', HOST: '127.0.0.1', FELIS_TOKEN: BENCH_TOKEN, FELIS_IMAGE: 'felis-world/files:dev' };
    return {
      dataDir,
      world,
      cluster,
      keyFile,
      env,
      startFunction: async (fn, fnEnv) => {
        const p = await startBundleProcess(join(root, `dist/functions/${fn}.mjs`), fnEnv);
        children.push(p.child);
        return p;
      },
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

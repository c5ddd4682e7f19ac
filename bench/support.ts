/**
 * What the benches share: medians, their flags, the client they use, and a function bundle
 * started in its own process as a Knative instance would run it.
 * @module
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBundleProcess, type BundleProcess } from '../test/support/bundle-process.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The median (0 for none). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? 0 : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
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

/** Starts `dist/functions/<name>.mjs` with `env` (nothing inherited) and waits for its port line. */
export function startFunction(name: string, env: NodeJS.ProcessEnv): Promise<BundleProcess> {
  return startBundleProcess(join(root, `dist/functions/${name}.mjs`), env);
}

/**
 * What the benches share: medians, their flags, the client they use, and a function bundle
 * started in its own process as a Knative instance would run it.
 * @module
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

export interface FunctionProcess {
  url: string;
  child: ChildProcess;
  /** What it printed so far. */
  output: () => string;
}

/** Starts `dist/functions/<name>.mjs` with `env` and waits for the port line it prints. */
export async function startFunction(name: string, env: NodeJS.ProcessEnv): Promise<FunctionProcess> {
  const child = spawn(process.execPath, [join(root, `dist/functions/${name}.mjs`)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr!.on('data', (d) => (out += d));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no port line in 15 s: ${out}`)), 15_000);
    child.once('exit', (code) => reject(new Error(`${name} exited ${code}: ${out}`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /"port":(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  return { url: `http://127.0.0.1:${port}`, child, output: () => out };
}

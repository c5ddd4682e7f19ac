/**
 * A function bundle in its own process, as production runs it: spawned with the given environment
 * (nothing inherited), and ready once it prints the JSON line naming its port.
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process';

export interface BundleProcess {
  child: ChildProcess;
  url: string;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
}

export async function startBundleProcess(bundle: string, env: NodeJS.ProcessEnv): Promise<BundleProcess> {
  const child = spawn(process.execPath, [bundle], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr!.on('data', (d) => (out += d));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${bundle}: no port line in 15 s: ${out}`)), 15_000);
    child.once('exit', (code) => reject(new Error(`${bundle} exited ${code}: ${out}`)));
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

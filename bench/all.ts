/**
 * `npm run bench [-- --json] [-- --ops N] [-- --runs N]`: every bench/*.bench.ts, one after the other (each
 * needs the machine to itself). With --json, one object holding every bench's keys.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const asJson = args.includes('--json');
// Every bench of the folder, in byte order of name: a new one runs by being here.
const benches = readdirSync(fileURLToPath(new URL('.', import.meta.url)))
  .filter((f) => f.endsWith('.bench.ts'))
  .sort();
const merged: Record<string, unknown> = {};

for (const b of benches) {
  const child = spawn(process.execPath, [fileURLToPath(new URL(b, import.meta.url)), ...args], { stdio: ['ignore', asJson ? 'pipe' : 'inherit', 'inherit'] });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${b} exited ${code}`);
  if (asJson) Object.assign(merged, JSON.parse(out.trim().split('\n').pop()!));
  else console.log();
}
if (asJson) console.log(JSON.stringify(merged));

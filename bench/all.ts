/**
 * `npm run bench [-- --json] [-- --ops N] [-- --runs N]`: every bench below, one after the other (each
 * needs the machine to itself). With --json, one object holding every bench's keys.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const asJson = args.includes('--json');
const benches = [
  'sync-runner.bench.ts',
  'cold-start.bench.ts',
  'archive.bench.ts',
  'archive-formats.bench.ts',
  'archive-7z.bench.ts',
  'compress.bench.ts',
  'auth.bench.ts',
  'browse.bench.ts',
  'download.bench.ts',
  'upload.bench.ts',
  'transfer-ratio.bench.ts',
  'contention.bench.ts',
  'list-page.bench.ts',
  'copy.bench.ts',
  'search.bench.ts',
  'files-usage.bench.ts',
  'batch.bench.ts',
  'trash.bench.ts',
  'edit.bench.ts',
  'pull.bench.ts',
];
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

/**
 * A stand-in for the file Job's program in end-to-end tests of background ops: it speaks the same
 * log protocol (progress lines, then one result line) on a script the test chooses, so the ops
 * listing can be tested on every outcome without a real archive.
 *
 *   node scripted-files-job.ts [--progress <done>/<total> | --hold <file> | --result <json> | --exit <code>]...
 *
 * The steps run in the order given: a progress line, a wait until <file> exists (bounded by 60 s so
 * a forgotten test cannot leave it running), a result line; then it exits with the code (default
 * 0). Other arguments (the real program's flags, appended by the Job) are ignored.
 */
import { existsSync } from 'node:fs';
import { formatProgressLine, RESULT_PREFIX } from '../../lib/protocol/result.ts';

const argv = process.argv.slice(2);
const write = (s: string) => new Promise<void>((res) => process.stdout.write(s, () => res()));
let exit = 0;
// The steps run in the order given.
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--progress') {
    const [done, total] = argv[++i]!.split('/').map(Number);
    await write(formatProgressLine({ done: done!, total: total! }));
  } else if (a === '--hold') {
    const file = argv[++i]!;
    const until = Date.now() + 60_000;
    while (!existsSync(file) && Date.now() < until) await new Promise((res) => setTimeout(res, 50));
  } else if (a === '--result') {
    await write(`${RESULT_PREFIX}${argv[++i]}\n`);
  } else if (a === '--exit') {
    exit = Number(argv[++i]);
  }
}
process.exitCode = exit;

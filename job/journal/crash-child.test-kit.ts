/**
 * Test-only: the Job program (as job/main.ts runs it) with a way to stop it at a chosen step, for
 * the crash tests. Environment:
 * - FELIS_TEST_STEPS: a file to which every journal step is appended, one name a line;
 * - FELIS_TEST_STOP_AT: `<n>:KILL` or `<n>:TERM` sends this process that signal right after the
 *   n-th journal step (counted from 1 over the whole run, recovery included); `progress:TERM` at
 *   the first progress line of the op;
 * - FELIS_TEST_FAIL_RENAME: `<n>` makes the n-th rename of a move fail with EIO (a rollback);
 * - FELIS_TEST_KILL_RENAME: `<n>` sends SIGKILL just before the n-th rename of a move;
 * - FELIS_TEST_KILL_AFTER: step names (`move:2`, or several with commas) send SIGKILL right after
 *   the first step so named, whichever op of the process makes it (an edit session runs many).
 *
 * @module
 */
import fs from 'node:fs';
import { runCli } from '../cli.ts';

const stepsFile = process.env.FELIS_TEST_STEPS;
const [stopAt, signal] = (process.env.FELIS_TEST_STOP_AT ?? '').split(':');
const failRename = Number(process.env.FELIS_TEST_FAIL_RENAME ?? 0);
const killRename = Number(process.env.FELIS_TEST_KILL_RENAME ?? 0);
const killAfter = new Set((process.env.FELIS_TEST_KILL_AFTER ?? '').split(',').filter(Boolean));
let steps = 0;
let renames = 0;
let progressed = false;

const stopHere = () => process.kill(process.pid, signal === 'KILL' ? 'SIGKILL' : 'SIGTERM');

process.stdout.on('error', () => {});
process.exitCode = await runCli(
  process.argv.slice(2),
  process.env,
  {
    stdout: (text) => new Promise<void>((resolve, reject) => process.stdout.write(text, (err) => (err ? reject(err) : resolve()))),
    stderr: (text) => {
      process.stderr.write(text);
    },
  },
  {
    onSignal: (stop) => {
      process.once('SIGTERM', stop);
    },
    journalStep: (name) => {
      steps++;
      if (stepsFile) fs.appendFileSync(stepsFile, `${name}\n`);
      if (String(steps) === stopAt) stopHere();
      if (killAfter.has(name)) process.kill(process.pid, 'SIGKILL');
    },
    rename: (from, to) => {
      if (++renames === killRename) process.kill(process.pid, 'SIGKILL');
      if (renames === failRename) throw Object.assign(new Error('injected EIO'), { code: 'EIO' });
      fs.renameSync(from, to);
    },
    progress: (line) => {
      if (stopAt === 'progress' && !progressed) {
        progressed = true;
        stopHere();
      }
      process.stdout.write(line);
    },
  },
);

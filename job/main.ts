/**
 * Entry of the file Job's program: `/usr/local/bin/felis files --op <op> --path <p> --worlds-root
 * /data [...]` (bundled by esbuild into dist/felis.mjs). It runs once per Job, so it keeps its
 * imports to node: built-ins, the protocol module, and the zip reader (yauzl: small,
 * dependency-free) for the archive ops; node:http and node:child_process load only when used.
 *
 * @module
 */
import { runCli } from './cli.ts';

// An EPIPE on stdout surfaces through the write callback; do not let the 'error' event crash us.
process.stdout.on('error', () => {});

process.exitCode = await runCli(
  process.argv.slice(2),
  process.env,
  {
    stdout: (text) =>
      new Promise<void>((resolve, reject) => {
        process.stdout.write(text, (err) => (err ? reject(err) : resolve()));
      }),
    stderr: (text) => {
      process.stderr.write(text);
    },
  },
  {
    // SIGTERM (the Job's deadline, a deletion): serving modes stop cleanly and print their result
    // line; a mutation finishes or undoes what it is doing (job/journal/stop.ts).
    onSignal: (stop) => {
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    },
  },
);

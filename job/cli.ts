/**
 * `felis files ...`: arguments and env in, one result line out, an exit code back
 * on stdout. Exit 2 for wiring mistakes in the invocation, 1 for infrastructure
 * failures (stderr `felis files: <error>`, no result line), 0 when a Result was printed — also for
 * caller-fault Results, which carry a `code`.
 *
 * @module
 */

import { type Batch, BatchEnvError, carriesItems, decodeBatchEnv } from '../lib/protocol/batch-env.ts';
import { ContentEnvError, decodeContentEnv } from '../lib/protocol/content-env.ts';
import { contractOf, isOp } from '../lib/protocol/ops.ts';
import type { Result } from '../lib/protocol/result.ts';
import { readTrashEnv, TrashEnvError, type TrashSettings } from '../lib/protocol/trash-env.ts';
import { type ExecuteOptions, execute, type OpRequest } from './dispatch/execute.ts';
import { type ExportRunOptions, runExport } from './export/run.ts';
import { type CliIO, EXIT_INFRA, EXIT_USAGE, printResult } from './program/exit.ts';
import { FlagError, parseFlags, USAGE } from './program/flags.ts';
import { runEditServe } from './serve/edit-run.ts';
import { type ReceiveRunOptions, runReceive } from './serve/receive-run.ts';
import { runServe, type ServeRunOptions } from './serve/run.ts';
import { runReceiveWrite, type WriteRunOptions } from './serve/write-run.ts';

export { type CliIO, EXIT_INFRA, EXIT_OK, EXIT_USAGE } from './program/exit.ts';

const PREFIX = 'felis files: ';

/** Runs one invocation. `argv` is everything after the program name (`files --op ...`). */
export async function runCli(
  argv: string[],
  env: Record<string, string | undefined>,
  io: CliIO,
  opts: ExecuteOptions & ServeRunOptions & ReceiveRunOptions & WriteRunOptions & { onExportListening?: ExportRunOptions['onListening'] } = {},
): Promise<number> {
  // `felis export --mode files ...`: one download served from the Pod (job/export/).
  if (argv[0] === 'export') return runExport(argv.slice(1), env, io, { onSignal: opts.onSignal, onListening: opts.onExportListening });
  if (argv[0] !== 'files') {
    io.stderr(`felis: unknown command ${JSON.stringify(argv[0] ?? '')}\n${USAGE}\n`);
    return EXIT_USAGE;
  }
  let parsed;
  try {
    parsed = parseFlags(argv.slice(1));
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    io.stderr(`${PREFIX}${e.message}\n${USAGE}\n`);
    return EXIT_USAGE;
  }
  if (parsed.help) {
    io.stderr(`${USAGE}\n`);
    return EXIT_USAGE;
  }
  const f = parsed.flags;
  // What an edit session's calls run with: this invocation's options, not its env's trash settings
  // (each call carries its own) nor its signal handler (the server's stop is the one).
  const { onSignal: _s, trash: _t, ...perCall } = opts;
  // Every read-write mode (an op, a received write or upload) keeps what it replaces as the env says.
  let trash: TrashSettings;
  try {
    trash = readTrashEnv(env);
  } catch (e) {
    if (!(e instanceof TrashEnvError)) throw e;
    io.stderr(`${PREFIX}${e.message}\n`);
    return EXIT_USAGE;
  }
  opts = { trash, ...opts };
  if (f.browseUrl !== '') {
    io.stderr(`${PREFIX}browse mode is not supported by this program\n`);
    return EXIT_INFRA;
  }
  // Serving answers many list/read requests; it is a mode of its own, not an op.
  if (f.serve && f.edit) {
    if (f.op !== '' || f.receive) {
      io.stderr(`${PREFIX}--serve --edit takes no --op or --receive\n`);
      return EXIT_USAGE;
    }
    return runEditServe(f.worldsRoot, env, io, { onSignal: opts.onSignal, onListening: opts.onListening, run: (argv, callEnv, callIo) => runCli(argv, callEnv, callIo, perCall) });
  }
  if (f.edit) {
    io.stderr(`${PREFIX}--edit goes with --serve\n`);
    return EXIT_USAGE;
  }
  if (f.serve && !f.receive) {
    if (f.op !== '') {
      io.stderr(`${PREFIX}--serve takes no --op\n`);
      return EXIT_USAGE;
    }
    return runServe(f.worldsRoot, env, io, opts);
  }
  // A write whose content is streamed to the Pod (with a job key) instead of carried in the env.
  if (f.receive && f.op === 'write') {
    if (f.serve) {
      io.stderr(`${PREFIX}--receive takes no --serve\n`);
      return EXIT_USAGE;
    }
    if (f.sha256 === '') {
      io.stderr(`${PREFIX}--sha256 is required for write\n`);
      return EXIT_USAGE;
    }
    // Its log carries what recovery did before the write (a write prints no progress of its own).
    return runReceiveWrite(f.worldsRoot, f, env, io, { progress: (line) => void Promise.resolve(io.stdout(line)).catch(() => {}), ...opts });
  }
  // Receiving lands uploads streamed to the Pod; a mode of its own too.
  if (f.receive) {
    if (f.op !== '' || f.serve) {
      io.stderr(`${PREFIX}--receive takes no --op or --serve\n`);
      return EXIT_USAGE;
    }
    return runReceive(f.worldsRoot, env, io, opts);
  }
  if (f.op === '') {
    io.stderr(`${PREFIX}--op is required\n`);
    return EXIT_USAGE;
  }
  if (f.limit !== undefined && f.limit < 1) {
    io.stderr(`${PREFIX}--limit must be at least 1\n`);
    return EXIT_USAGE;
  }
  // What the op's flags lack, as its contract says.
  const refused = isOp(f.op) ? contractOf(f.op).refuse(f) : undefined;
  if (refused) {
    io.stderr(`${PREFIX}${refused}\n`);
    return EXIT_USAGE;
  }
  let content: Buffer | undefined;
  if (f.op === 'write') {
    try {
      content = decodeContentEnv(env);
    } catch (e) {
      if (!(e instanceof ContentEnvError)) throw e;
      io.stderr(`${PREFIX}${e.message}\n`);
      return EXIT_USAGE;
    }
  }
  let batch: Batch | undefined;
  if (carriesItems(f.op)) {
    try {
      batch = decodeBatchEnv(f.op, env);
    } catch (e) {
      if (!(e instanceof BatchEnvError)) throw e;
      io.stderr(`${PREFIX}${e.message}\n`);
      return EXIT_USAGE;
    }
  }
  if (f.op === 'upload' && !env.FELIS_UPLOAD_TOKEN) {
    io.stderr(`${PREFIX}FELIS_UPLOAD_TOKEN is required for upload\n`);
    return EXIT_USAGE;
  }

  // A pull serves its cancel call on the Pod address while it runs (job/serve/cancel-server.ts).
  let cancel: Awaited<ReturnType<typeof import('./serve/cancel-server.ts').listenForCancel>>;
  if (f.op === 'pull') {
    try {
      cancel = await (await import('./serve/cancel-server.ts')).listenForCancel(env);
    } catch (e) {
      io.stderr(`${PREFIX}${e instanceof Error ? e.message : String(e)}\n`);
      return EXIT_USAGE;
    }
  }

  if (!isOp(f.op)) {
    io.stderr(`${PREFIX}unknown op ${JSON.stringify(f.op)}\n`);
    return EXIT_INFRA;
  }
  let result: Result;
  try {
    result = await execute(
      {
        op: f.op,
        path: f.path,
        worldsRoot: f.worldsRoot,
        // The op's own flags, as its contract reads them (functions/<name>/op.ts); then what the env carries.
        ...contractOf(f.op).decode(f),
        ...(content ? { content } : {}),
        ...(batch ? { batch } : {}),
        ...(f.op === 'pull' ? { pull: { url: f.url, env, ...(cancel ? { cancel: cancel.signal } : {}) } } : {}),
      } as OpRequest,
      // Progress lines share stdout with the result line; a failed one is advisory and ignored.
      // FELIS_OP_ID (the Job's op-id label, through the downward API) names this op in its journals,
      // and a pull's staging folder.
      { progress: (line) => void Promise.resolve(io.stdout(line)).catch(() => {}), opId: env.FELIS_OP_ID || undefined, ...opts },
    );
  } catch (e) {
    io.stderr(`${PREFIX}${e instanceof Error ? e.message : String(e)}\n`);
    return EXIT_INFRA;
  } finally {
    await cancel?.close();
  }
  return printResult(io, PREFIX, result);
}

/**
 * `felis files --serve --worlds-root <root>`: the Job program as a read-only server (see
 * server.ts), configured by its environment, so that the Job spec carries only the token's digest
 * and the Pod's address comes from the downward API:
 *
 * - `FELIS_POD_IP` (required): the address to listen on, `status.podIP`;
 * - `FELIS_SERVE_TOKEN_SHA256` (required): hex SHA-256 of the token callers present;
 * - `FELIS_SERVE_PORT` (default 8420), `FELIS_SERVE_IDLE_SECONDS` (default 60),
 *   `FELIS_SERVE_LIFETIME_SECONDS` (default 540);
 * - `FELIS_SCRATCH_DIR` (optional): a writable folder of the Pod's own (an emptyDir) where paged
 *   listings keep sorted indexes of big folders (job/listing/list-index.ts); without it every page scans.
 *
 * It prints one result line when it stops (`{}`: nothing went wrong), as every file Job does, so a
 * reader of its log sees the same protocol. Exit 2 for a wrong environment, 1 when the world or the
 * address cannot be had, 0 after a clean stop.
 *
 * @module
 */

import { type ExecuteOptions, execute } from '../dispatch/execute.ts';
import { ListIndexes } from '../listing/list-index.ts';
import { type CliIO, EXIT_INFRA as INFRA, printResult, EXIT_USAGE as USAGE } from '../program/exit.ts';
import { WarmResults } from '../runtime/warm-results.ts';
import { SERVE_PORT, sessionEnv } from './env.ts';
import { type Serving, startServing } from './server.ts';
import { listening, worldRootOpens } from './start.ts';

export { SERVE_PORT };
export const DEFAULT_IDLE_SECONDS = 60;
export const DEFAULT_LIFETIME_SECONDS = 540;

const PREFIX = 'felis files: ';

export interface ServeRunOptions extends ExecuteOptions {
  /** Registers the stop handler for SIGTERM/SIGINT; tests call it themselves. */
  onSignal?: (stop: () => void) => void;
  /** Sees the server once it listens (tests: its address). */
  onListening?: (s: Serving) => void;
}

export async function runServe(worldsRoot: string, env: Record<string, string | undefined>, io: CliIO, opts: ServeRunOptions = {}): Promise<number> {
  let host: string;
  let digest: string;
  let port: number;
  let idle: number;
  let lifetime: number;
  let scratch: string | undefined;
  try {
    ({ host, digest, port, idle, lifetime } = sessionEnv(env, { idleSeconds: DEFAULT_IDLE_SECONDS, lifetimeSeconds: DEFAULT_LIFETIME_SECONDS }));
    scratch = env.FELIS_SCRATCH_DIR || undefined;
    if (scratch !== undefined && !scratch.startsWith('/')) throw new Error('FELIS_SCRATCH_DIR must be an absolute path');
  } catch (e) {
    io.stderr(`${PREFIX}${(e as Error).message}\n`);
    return USAGE;
  }
  if (!worldRootOpens(worldsRoot, io, PREFIX)) return INFRA;

  const listIndexes = scratch === undefined ? undefined : new ListIndexes(scratch);
  // The last disk usage answers, given again while the tree's folders are unchanged.
  const warm = new WarmResults();
  const serving = await listening(
    () =>
      startServing({ host, port, tokenSha256: digest, idleMs: idle * 1000, lifetimeMs: lifetime * 1000, run: (op, query) => execute({ op, worldsRoot, ...query }, { ...opts, listIndexes, warm }) }),
    `listen on ${host}:${port}`,
    io,
    PREFIX,
    opts.onSignal,
  );
  if (!serving) return INFRA;
  opts.onListening?.(serving);
  io.stderr(`${PREFIX}serving list and read on ${host}:${serving.address.port}\n`);
  const { reason, served } = await serving.stopped;
  // A build under way finishes first, so that close leaves nothing of it behind.
  await listIndexes?.settled();
  listIndexes?.close();
  io.stderr(`${PREFIX}stopped (${reason}) after ${served} requests\n`);
  return printResult(io, PREFIX, {});
}

/**
 * `felis files --serve --edit --worlds-root <root>`: the Job program as an edit session (see
 * edit-server.ts), configured by the same environment as a browse session (job/serve/env.ts:
 * `FELIS_POD_IP`, `FELIS_SERVE_TOKEN_SHA256`, `FELIS_SERVE_PORT`, `FELIS_SERVE_IDLE_SECONDS`,
 * `FELIS_SERVE_LIFETIME_SECONDS`). Each call's op prints its progress and recovery lines to this
 * Pod's log; the session prints one result line (`{}`) when it stops, as every file Job does.
 * Exit 2 for a wrong environment, 1 when the world or the address cannot be had, 0 after a stop.
 * @module
 */
import { type CliIO, EXIT_INFRA as INFRA, printResult, EXIT_USAGE as USAGE } from '../program/exit.ts';
import { type RunProgram, startEditServing } from './edit-server.ts';
import { sessionEnv } from './env.ts';
import { DEFAULT_IDLE_SECONDS, DEFAULT_LIFETIME_SECONDS } from './run.ts';
import type { Serving } from './server.ts';
import { listening, worldRootOpens } from './start.ts';

const PREFIX = 'felis files: ';

export interface EditRunOptions {
  run: RunProgram;
  onSignal?: (stop: () => void) => void;
  onListening?: (s: Serving) => void;
}

export async function runEditServe(worldsRoot: string, env: Record<string, string | undefined>, io: CliIO, opts: EditRunOptions): Promise<number> {
  let host: string;
  let digest: string;
  let port: number;
  let idle: number;
  let lifetime: number;
  try {
    ({ host, digest, port, idle, lifetime } = sessionEnv(env, { idleSeconds: DEFAULT_IDLE_SECONDS, lifetimeSeconds: DEFAULT_LIFETIME_SECONDS }));
  } catch (e) {
    io.stderr(`${PREFIX}${(e as Error).message}\n`);
    return USAGE;
  }
  if (!worldRootOpens(worldsRoot, io, PREFIX)) return INFRA;
  const serving = await listening(
    () =>
      startEditServing({
        host,
        port,
        tokenSha256: digest,
        worldsRoot,
        run: opts.run,
        idleMs: idle * 1000,
        lifetimeMs: lifetime * 1000,
        log: (line) => void Promise.resolve(io.stdout(line)).catch(() => {}),
      }),
    `listen on ${host}:${port}`,
    io,
    PREFIX,
    opts.onSignal,
  );
  if (!serving) return INFRA;
  opts.onListening?.(serving);
  io.stderr(`${PREFIX}serving edits on ${host}:${serving.address.port}\n`);
  const { reason, served } = await serving.stopped;
  io.stderr(`${PREFIX}stopped (${reason}) after ${served} changes\n`);
  return printResult(io, PREFIX, {});
}

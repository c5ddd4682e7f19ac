/**
 * `felis files --op write --receive --path <p> --sha256 <hex> [--expect-sha256 <hex>] [--create-only]
 * --worlds-root <root>`: the write op, its content received on the Pod address (receive-write.ts)
 * instead of read from `FELIS_FILE_CONTENT_*`. Configured as the other serving modes are
 * (`FELIS_POD_IP`, `FELIS_SERVE_TOKEN_SHA256`, `FELIS_SERVE_PORT`, `FELIS_SERVE_IDLE_SECONDS`,
 * `FELIS_SERVE_LIFETIME_SECONDS`).
 *
 * Once one whole body is in, it is the one-shot write op (`execute`): the same digest and size
 * checks, withheld-file rules, preconditions and atomic landing, and the same result line on stdout.
 * When no whole body comes (the function gave up or died, or cut the body off), nothing is
 * written: stderr says why and the exit is 1, so the Job ends failed without a result.
 * Exit 2 for a wrong environment.
 * @module
 */

import { WRITE_RECEIVE_IDLE_SECONDS, WRITE_RECEIVE_LIFETIME_SECONDS } from '../../lib/protocol/content-env.ts';
import { execute } from '../dispatch/execute.ts';
import { type CliIO, EXIT_INFRA, EXIT_USAGE, printResult } from '../program/exit.ts';
import { type ExecuteOptions, MAX_WRITE_BYTES } from '../runtime/types.ts';
import { listenEnv, seconds } from './env.ts';
import { startWriteReceiving, type WriteReceiving } from './receive-write.ts';
import { listening, worldRootOpens } from './start.ts';

const PREFIX = 'felis files: ';

export interface WriteRequestFlags {
  path: string;
  sha256: string;
  expectSha256: string;
  createOnly: boolean;
}

export interface WriteRunOptions extends ExecuteOptions {
  onSignal?: (stop: () => void) => void;
  onWriteReceiving?: (r: WriteReceiving) => void;
}

export async function runReceiveWrite(worldsRoot: string, f: WriteRequestFlags, env: Record<string, string | undefined>, io: CliIO, opts: WriteRunOptions = {}): Promise<number> {
  let host: string, digest: string, port: number, idle: number, lifetime: number;
  try {
    ({ host, digest, port } = listenEnv(env, 'FELIS_SERVE_TOKEN_SHA256'));
    idle = seconds(env, 'FELIS_SERVE_IDLE_SECONDS', WRITE_RECEIVE_IDLE_SECONDS);
    lifetime = seconds(env, 'FELIS_SERVE_LIFETIME_SECONDS', WRITE_RECEIVE_LIFETIME_SECONDS);
  } catch (e) {
    io.stderr(`${PREFIX}${(e as Error).message}\n`);
    return EXIT_USAGE;
  }
  if (!worldRootOpens(worldsRoot, io, PREFIX)) return EXIT_INFRA;
  const r = await listening(
    () => startWriteReceiving({ host, port, tokenSha256: digest, maxBytes: MAX_WRITE_BYTES, idleMs: idle * 1000, lifetimeMs: lifetime * 1000 }),
    `listen on ${host}:${port}`,
    io,
    PREFIX,
    opts.onSignal,
  );
  if (!r) return EXIT_INFRA;
  opts.onWriteReceiving?.(r);
  io.stderr(`${PREFIX}waiting for the content of ${f.path} on ${host}:${r.address.port}\n`);
  const { reason, content } = await r.stopped;
  if (!content) {
    io.stderr(`${PREFIX}no content arrived (${reason}); nothing was written\n`);
    return EXIT_INFRA;
  }
  let result;
  try {
    result = await execute({ op: 'write', path: f.path, worldsRoot, content, sha256: f.sha256, expectSha256: f.expectSha256, createOnly: f.createOnly }, opts);
  } catch (e) {
    io.stderr(`${PREFIX}${e instanceof Error ? e.message : String(e)}\n`);
    return EXIT_INFRA;
  }
  return printResult(io, PREFIX, result);
}

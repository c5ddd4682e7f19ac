/**
 * `felis files --receive --worlds-root <root>`: the Job program as an upload receiver (see
 * receive.ts), configured by its environment as the serving mode is:
 *
 * - `FELIS_POD_IP`, `FELIS_SERVE_TOKEN_SHA256`, `FELIS_SERVE_PORT`, `FELIS_SERVE_IDLE_SECONDS`,
 *   `FELIS_SERVE_LIFETIME_SECONDS` as for `--serve`;
 * - `FELIS_RECEIVE_ONCE=true`: stop after the first upload (the single PUT's Job);
 * - `FELIS_UPLOAD_SESSION=<32 hex>`: serve that upload session instead (receive-session.ts); it
 *   prints a progress line (the bytes received) at start when it resumes one, and for the begin and
 *   each part before answering it, then the commit's Result, or a coded one saying why the session
 *   ended without placing anything.
 *
 * It prints one result line when it stops: the upload's Result when it received one (placed, or
 * refused with a code), `{}` when none came. A transfer error (the bytes were not what was promised)
 * is not a Result: stderr and exit 1, as for the one-shot upload op. Exit 2 for a wrong environment.
 *
 * @module
 */
import { formatProgressLine } from '../../lib/protocol/result.ts';
import { openWritableContext } from '../op-kit/context.ts';
import { type CliIO, printResult } from '../program/exit.ts';
import type { ExecuteOptions } from '../runtime/types.ts';
import { landUpload } from '../upload/land.ts';
import { listenEnv, seconds } from './env.ts';
import { type Receiving, startReceiving } from './receive.ts';
import { type SessionReceiving, startSessionReceiving } from './receive-session.ts';
import { DEFAULT_IDLE_SECONDS, DEFAULT_LIFETIME_SECONDS } from './run.ts';
import { listening, worldRootOpens } from './start.ts';

const PREFIX = 'felis files: ';

export interface ReceiveRunOptions extends ExecuteOptions {
  onSignal?: (stop: () => void) => void;
  onReceiving?: (r: Receiving) => void;
  onSession?: (r: SessionReceiving) => void;
}

export async function runReceive(worldsRoot: string, env: Record<string, string | undefined>, io: CliIO, opts: ReceiveRunOptions = {}): Promise<number> {
  let host: string, digest: string, port: number, idle: number, lifetime: number;
  try {
    ({ host, digest, port } = listenEnv(env, 'FELIS_SERVE_TOKEN_SHA256'));
    idle = seconds(env, 'FELIS_SERVE_IDLE_SECONDS', DEFAULT_IDLE_SECONDS);
    lifetime = seconds(env, 'FELIS_SERVE_LIFETIME_SECONDS', DEFAULT_LIFETIME_SECONDS);
  } catch (e) {
    io.stderr(`${PREFIX}${(e as Error).message}\n`);
    return 2;
  }
  if (!worldRootOpens(worldsRoot, io, PREFIX)) return 1;
  const sessionId = env.FELIS_UPLOAD_SESSION;
  if (sessionId !== undefined) {
    if (!/^[0-9a-f]{32}$/.test(sessionId)) {
      io.stderr(`${PREFIX}FELIS_UPLOAD_SESSION must be 32 lowercase hex characters\n`);
      return 2;
    }
    // Progress shares stdout with the result line; a failed one is advisory and ignored. Not
    // throttled: one line per call that changed what is received, and each call already waits its
    // turn in the world's line, so they cannot flood the log; the op's `done` is then the session's.
    const printProgress = (received: number, size: number) => {
      try {
        void Promise.resolve(io.stdout(formatProgressLine({ done: Math.min(received, size), total: size }))).catch(() => {});
      } catch {
        // Advisory.
      }
    };
    const sr = await listening(
      () =>
        startSessionReceiving({
          host,
          port,
          tokenSha256: digest,
          id: sessionId,
          context: () => openWritableContext(worldsRoot, opts),
          idleMs: idle * 1000,
          lifetimeMs: lifetime * 1000,
          progress: printProgress,
        }),
      `serve upload session ${sessionId}`,
      io,
      PREFIX,
      opts.onSignal,
    );
    if (!sr) return 1;
    opts.onSession?.(sr);
    io.stderr(`${PREFIX}serving upload session ${sessionId} on ${host}:${sr.address.port}\n`);
    const { reason, result } = await sr.stopped;
    io.stderr(`${PREFIX}upload session stopped (${reason})\n`);
    return printResult(io, PREFIX, result);
  }
  const r = await listening(
    () =>
      startReceiving({
        host,
        port,
        tokenSha256: digest,
        idleMs: idle * 1000,
        lifetimeMs: lifetime * 1000,
        once: env.FELIS_RECEIVE_ONCE === 'true',
        land: async (req, body) => {
          const ctx = openWritableContext(worldsRoot, opts);
          try {
            return await landUpload(ctx, req, body);
          } finally {
            ctx.root.close();
          }
        },
      }),
    `listen on ${host}:${port}`,
    io,
    PREFIX,
    opts.onSignal,
  );
  if (!r) return 1;
  opts.onReceiving?.(r);
  io.stderr(`${PREFIX}receiving uploads on ${host}:${r.address.port}\n`);
  const { reason, landings, first } = await r.stopped;
  io.stderr(`${PREFIX}stopped (${reason}) after ${landings} uploads\n`);
  if (first?.kind === 'transfer') {
    io.stderr(`${PREFIX}${first.message}\n`);
    return 1;
  }
  return printResult(io, PREFIX, first?.kind === 'result' ? first.result : {});
}

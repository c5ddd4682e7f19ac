/**
 * `felis export --mode files --server S --worlds-root R --path P [--dir]`: Felis's export command
 * line, with one extension: instead of pushing the download to `--target-url`, this program
 * serves it from the Pod (server.ts) to the function that created the Job, which streams it on
 * to the browser. The world is mounted read-only. Configured by its environment, so the Job spec
 * carries only the token's digest and the address comes from the downward API:
 *
 * - `FELIS_POD_IP` (required): the address to listen on, `status.podIP`;
 * - `FELIS_EXPORT_TOKEN_SHA256` (required): hex SHA-256 of the token the caller presents;
 * - `FELIS_SERVE_PORT` (default 8420), `FELIS_EXPORT_IDLE_SECONDS` (default 60);
 * - `FELIS_SCRATCH_DIR` (optional): a writable folder of the Pod's own where a folder download's
 *   zip central directory waits instead of in memory.
 *
 * It prints one result line when it stops: the totals (`{"files":1,"bytes":N}`), a refusal with
 * its code, or `{}` when nobody came. Exit 2 for a wrong invocation, 1 when the world or the
 * address cannot be had or the download failed part way (the receiver went away, a read failed),
 * 0 otherwise.
 * @module
 */
import { type CliIO, printResult } from '../program/exit.ts';
import { listenEnv, seconds } from '../serve/env.ts';
import { listening } from '../serve/start.ts';
import { WorldRoot } from '../volume/root.ts';
import { sendDownload } from './send.ts';
import { type ExportServing, startExportServing } from './server.ts';

export const DEFAULT_EXPORT_IDLE_SECONDS = 60;
const PREFIX = 'felis export: ';

export const EXPORT_USAGE = 'usage: felis export --mode files --server <name> --path <file or folder> [--dir] [--worlds-root /data]';

export interface ExportFlags {
  mode: string;
  server: string;
  path: string;
  worldsRoot: string;
  dir: boolean;
  targetUrl: string;
}

const STRING_FLAGS: Record<string, keyof ExportFlags> = { mode: 'mode', server: 'server', path: 'path', 'worlds-root': 'worldsRoot', 'target-url': 'targetUrl' };

/** Go `flag` style: `-x v`, `--x v`, `--x=v`; `--dir` or `--dir=true|false`; `--` ends the flags. */
export function parseExportFlags(args: string[]): ExportFlags {
  const f: ExportFlags = { mode: '', server: '', path: '', worldsRoot: '/data', dir: false, targetUrl: '' };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') break;
    const m = /^--?([a-z-]+)(?:=(.*))?$/s.exec(a);
    if (!m) throw new Error(`unexpected argument ${JSON.stringify(a)}`);
    const [, name, value] = m as unknown as [string, string, string | undefined];
    if (name === 'dir') {
      if (value === undefined || ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)) f.dir = true;
      else if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value)) f.dir = false;
      else throw new Error(`invalid boolean value ${JSON.stringify(value)} for -dir`);
      continue;
    }
    const key = Object.hasOwn(STRING_FLAGS, name) ? STRING_FLAGS[name] : undefined;
    if (!key) throw new Error(`flag provided but not defined: -${name}`);
    let v = value;
    if (v === undefined) {
      if (i + 1 >= args.length) throw new Error(`flag needs an argument: -${name}`);
      v = args[++i]!;
    }
    (f as unknown as Record<string, string>)[key] = v;
  }
  return f;
}

export interface ExportRunOptions {
  onSignal?: (stop: () => void) => void;
  onListening?: (s: ExportServing) => void;
}

/** Runs `felis export ...` (`argv` is what follows `export`). */
export async function runExport(argv: string[], env: Record<string, string | undefined>, io: CliIO, opts: ExportRunOptions = {}): Promise<number> {
  let f: ExportFlags;
  let host: string;
  let digest: string;
  let port: number;
  let idle: number;
  let scratch: string | undefined;
  try {
    f = parseExportFlags(argv);
    if (f.mode !== 'files') throw new Error(`--mode ${JSON.stringify(f.mode)} is not supported by this program (only files)`);
    if (f.targetUrl !== '') throw new Error('--target-url is not supported by this program: it serves the download on the Pod address instead');
    if (f.server === '') throw new Error('--server is required');
    if (f.path === '') throw new Error('--path is required');
    ({ host, digest, port } = listenEnv(env, 'FELIS_EXPORT_TOKEN_SHA256'));
    idle = seconds(env, 'FELIS_EXPORT_IDLE_SECONDS', DEFAULT_EXPORT_IDLE_SECONDS);
    scratch = env.FELIS_SCRATCH_DIR || undefined;
    if (scratch !== undefined && !scratch.startsWith('/')) throw new Error('FELIS_SCRATCH_DIR must be an absolute path');
  } catch (e) {
    io.stderr(`${PREFIX}${(e as Error).message}\n${EXPORT_USAGE}\n`);
    return 2;
  }
  let root: WorldRoot;
  try {
    root = WorldRoot.open(f.worldsRoot);
  } catch (e) {
    io.stderr(`${PREFIX}open world root ${f.worldsRoot}: ${(e as Error).message}\n`);
    return 1;
  }
  try {
    const serving = await listening(
      () => startExportServing({ host, port, tokenSha256: digest, idleMs: idle * 1000, serve: (res, signal, ask) => sendDownload(root, f.path, f.dir, res, signal, scratch, ask) }),
      `listen on ${host}:${port}`,
      io,
      PREFIX,
      opts.onSignal,
    );
    if (!serving) return 1;
    opts.onListening?.(serving);
    io.stderr(`${PREFIX}serving ${f.dir ? 'folder' : 'file'} ${JSON.stringify(f.path)} of ${f.server} on ${host}:${serving.address.port}\n`);
    const { reason, outcome } = await serving.stopped;
    if (outcome && 'failed' in outcome) {
      io.stderr(`${PREFIX}the download failed: ${outcome.failed}\n`);
      return 1;
    }
    io.stderr(`${PREFIX}stopped (${reason})\n`);
    return await printResult(io, PREFIX, outcome?.result ?? {});
  } finally {
    root.close();
  }
}

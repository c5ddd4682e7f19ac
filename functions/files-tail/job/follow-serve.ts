/**
 * A follow's Job serving its lines: `GET /follow[?from=<inode>:<offset>]` on the Pod's address
 * (FELIS_POD_IP, FELIS_SERVE_PORT) to the bearer of the Job's token (its SHA-256 in
 * FELIS_SERVE_TOKEN_SHA256; 401 without it, job/http/router.ts), answered with the lines appended
 * from there on (follow.ts) as NDJSON, `{"id":"<inode>:<offset>","line":"…"}` each, written as
 * the caller reads them (backpressure: memory stays a block and a line). One caller: the Job ends
 * when it hangs up, when nobody comes within `idleMs`, and at `lifetimeMs` (the follow's ten
 * minutes), when it writes `{"end":"lifetime"}` last. The function relays the lines as
 * Server-Sent Events (files.tail with `follow=true`, lib/files/log-follow.ts).
 * @module
 */
import type http from 'node:http';
import { isIP } from 'node:net';
import { send } from '../../../job/http/answer.ts';
import { PodServer } from '../../../job/http/listen.ts';
import { FOLLOW_ID, FOLLOW_LIFETIME_SECONDS, FOLLOW_PATH } from '../op.ts';
import { type FollowedFile, follow } from './follow.ts';

export { FOLLOW_PATH };

/** The serving modes' port (job/serve/env.ts SERVE_PORT), unless FELIS_SERVE_PORT says otherwise. */
const SERVE_PORT = 8420;
/** How long a follow lasts, and how often it looks at the file's size. */
export const FOLLOW_LIFETIME_MS = FOLLOW_LIFETIME_SECONDS * 1000;
export const FOLLOW_POLL_MS = 250;

export interface FollowServeOptions {
  file: FollowedFile;
  /** Where a caller without `from` starts: the Job's `--from`, else the file's size when the Job began (the tail it was shown ends there). */
  start: { ino?: bigint; offset: number };
  maxLine: number;
  idleMs: number;
  lifetimeMs?: number;
  pollMs?: number;
  onListening?: (port: number) => void;
}

export type FollowEnd = 'hung_up' | 'idle' | 'lifetime' | 'signal';

/** `<inode>:<offset>` or a bare offset; undefined for anything else (the caller's start is used). */
export function parseFrom(v: string | null): { ino?: bigint; offset: number } | undefined {
  if (v === null) return undefined;
  const m = FOLLOW_ID.exec(v);
  if (!m) return undefined;
  return { ...(m[1] !== undefined ? { ino: BigInt(m[1]) } : {}), offset: Number(m[2]) };
}

/**
 * Where to listen and whom to let in, read as job/serve/env.ts reads them for the serving modes
 * (an op's run sits below job/serve/, so it reads the three itself).
 */
function listenEnv(env: Record<string, string | undefined>): { host: string; digest: string; port: number } {
  const host = env.FELIS_POD_IP ?? '';
  if (isIP(host) === 0) throw new Error('FELIS_POD_IP must be the Pod address to listen on');
  const digest = env.FELIS_SERVE_TOKEN_SHA256 ?? '';
  if (!/^[0-9a-f]{64}$/.test(digest)) throw new Error('FELIS_SERVE_TOKEN_SHA256 must be 64 lowercase hex characters');
  const p = env.FELIS_SERVE_PORT;
  const port = p === undefined || p === '' ? SERVE_PORT : Number(p);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('FELIS_SERVE_PORT must be a port number');
  return { host, digest, port };
}

/** Serves one follow; settles with how it ended. */
export async function serveFollow(env: Record<string, string | undefined>, o: FollowServeOptions): Promise<{ end: FollowEnd; lines: number }> {
  const { host, digest, port } = listenEnv(env);
  const lifetimeMs = o.lifetimeMs ?? FOLLOW_LIFETIME_MS;
  const pod = new PodServer<'hung_up'>({ tokenSha256: digest, requestTimeoutMs: 0, life: { idleMs: o.idleMs, lifetimeMs, graceMs: 1000 } });
  const stop = new AbortController();
  let claimed = false;
  let lines = 0;
  pod.route('GET', FOLLOW_PATH, async (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => {
    req.resume();
    if (claimed) return send(res, 409, '{"error":"this follow has its caller"}\n');
    claimed = true;
    pod.life.holdIdle(); // held by its caller from now on
    const from = parseFrom(url.searchParams.get('from')) ?? o.start;
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
    res.flushHeaders(); // the caller learns at once that its follow began
    const gone = () => stop.abort();
    res.once('close', gone);
    const timer = setTimeout(() => stop.abort(), lifetimeMs - 1000);
    let ended = false;
    try {
      for await (const l of follow(o.file, { from, pollMs: o.pollMs ?? FOLLOW_POLL_MS, maxLine: o.maxLine, signal: stop.signal })) {
        lines++;
        if (!res.write(`${JSON.stringify(l)}\n`)) await new Promise<void>((ok) => (res.writableNeedDrain && !res.destroyed ? res.once('drain', ok).once('close', ok) : ok()));
      }
      if (!res.destroyed) {
        res.end('{"end":"lifetime"}\n');
        ended = true;
      }
    } finally {
      clearTimeout(timer);
      res.off('close', gone);
      pod.life.stop(ended ? 'lifetime' : 'hung_up');
    }
  });
  const address = await pod.listen(port, host);
  pod.life.armIdle(); // nobody coming within idleMs ends it
  o.onListening?.(address.port);
  const reason = await pod.stopped;
  stop.abort();
  return { end: reason as FollowEnd, lines };
}

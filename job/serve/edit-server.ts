/**
 * The edit mode of the file Job: an HTTP server on the Pod's own address that makes one small change
 * to the world per call, for a caller holding the world's annotation lock. The call carries the
 * arguments and env a one-shot Job of the same op would be started with, and the Pod runs them
 * through the same program (`run`, production: `runCli`), so the answer is the one-shot Job's
 * result line, its guards, journal, trash and codes included.
 *
 * Wire: `POST /op`, `Authorization: Bearer <token>`, a JSON body (lib/protocol/edit-call.ts). 200
 * carries the result line's payload; 500 `{error}` when the program printed no result (an
 * infrastructure failure, as a one-shot Job exiting 1); 401 without the right token (before
 * anything else is looked at); 409 `{error}` for a lock that no longer holds (the Pod changes
 * nothing then: whoever sent it may have lost the world long ago); 400 for a body that is not a
 * call, an op that is not a session's, a program mode or flags it does not take; 404/405/413
 * otherwise; 503 when its queue is full. `POST /end` (the same token) stops the session: 202.
 *
 * One change at a time: calls queue in arrival order (the lock makes more than one rare: only a
 * call orphaned by a caller that died can still be running when the next lock's call arrives).
 * @module
 */
import { decodeEditCall, EDIT_PATH, END_PATH, isEditOp, leaseHolds, MAX_EDIT_BODY_BYTES } from '../../lib/protocol/edit-call.ts';
import { RESULT_PREFIX, ResultLineScanner } from '../../lib/protocol/result.ts';
import { errorBody, send } from '../http/answer.ts';
import { readBody } from '../http/body.ts';
import { PodServer } from '../http/listen.ts';
import { parseFlags } from '../program/flags.ts';
import type { Serving } from './server.ts';

/** One run of the Job program, as a one-shot Job's container would run it. */
export type RunProgram = (argv: string[], env: Record<string, string>, io: { stdout: (t: string) => void; stderr: (t: string) => void }) => Promise<number>;

export interface EditServeOptions {
  host: string;
  port: number;
  tokenSha256: string;
  /** Where the world is mounted: every call runs on it, whatever root it names. */
  worldsRoot: string;
  run: RunProgram;
  idleMs: number;
  lifetimeMs: number;
  now?: () => number;
  /** Where the program's progress and recovery lines go (the Pod's log). */
  log?: (line: string) => void;
  maxQueued?: number;
  requestTimeoutMs?: number;
}

/**
 * The call's arguments as this Pod runs them, on its own world root whatever root the call names
 * (the function names the mount path, the Pod knows where it is mounted); or why they are not ones
 * it runs: a single op of a session's, no serving mode, nothing after the flags.
 */
export function argvFor(argv: string[], worldsRoot: string): { argv: string[] } | { refused: string } {
  const own = [...argv, '--worlds-root', worldsRoot];
  let parsed;
  try {
    parsed = parseFlags(own.slice(1));
  } catch (e) {
    return { refused: (e as Error).message };
  }
  const flags = parsed.flags;
  if (parsed.help || parsed.rest.length > 0 || flags.worldsRoot !== worldsRoot) return { refused: 'a call carries flags only' };
  if (!isEditOp(flags.op)) return { refused: `op ${JSON.stringify(flags.op)} is not one a session makes` };
  if (flags.serve || flags.receive || flags.edit || flags.browseUrl !== '') return { refused: 'a call runs one op, no serving mode' };
  return { argv: own };
}

export async function startEditServing(o: EditServeOptions): Promise<Serving> {
  const now = o.now ?? Date.now;
  const maxQueued = o.maxQueued ?? 8;
  let queued = 0;
  let served = 0;
  let tail: Promise<unknown> = Promise.resolve();
  const pod = new PodServer({
    tokenSha256: o.tokenSha256,
    requestTimeoutMs: o.requestTimeoutMs ?? 60_000,
    life: { idleMs: o.idleMs, lifetimeMs: o.lifetimeMs, graceMs: o.requestTimeoutMs ?? 60_000 },
  });
  const { life } = pod;

  pod.route('POST', END_PATH, (req, res) => {
    // The server is no longer stopped: no call can come until it is again, so the session ends
    // now (after any call in hand) rather than at its idle period.
    req.resume();
    res.setHeader('connection', 'close');
    send(res, 202, '{"ending":true}');
    life.stop('signal');
  });

  pod.route('POST', EDIT_PATH, async (req, res) => {
    if (queued >= maxQueued) {
      req.resume();
      return send(res, 503, '{"error":"busy"}', { 'retry-after': '1' });
    }
    queued++;
    life.holdIdle();
    try {
      const body = await readBody(req, MAX_EDIT_BODY_BYTES);
      if (body === undefined) {
        res.setHeader('connection', 'close');
        return send(res, 413, '{"error":"the call is too large"}');
      }
      const call = decodeEditCall(body);
      if (typeof call === 'string') return send(res, 400, errorBody(call));
      const args = argvFor(call.argv, o.worldsRoot);
      if ('refused' in args) return send(res, 400, errorBody(args.refused));
      // In line behind any call still running; the lease is judged when this one's turn comes.
      const turn = tail.then(() => runCall(args.argv, call.env, call.lock));
      tail = turn.catch(() => {});
      const answer = await turn;
      send(res, answer.status, answer.body);
    } finally {
      queued--;
      if (life.stopping) setImmediate(() => pod.server.closeIdleConnections());
      else if (queued === 0) life.armIdle();
    }
  });

  async function runCall(argv: string[], env: Record<string, string>, lock: string): Promise<{ status: number; body: string }> {
    if (!leaseHolds(lock, now())) return { status: 409, body: '{"error":"the lock this call carries does not hold"}' };
    const scanner = new ResultLineScanner();
    let stderr = '';
    const code = await o.run(argv, env, {
      stdout: (t) => {
        scanner.push(t);
        // The Pod's log keeps the one result line of its own end; a call's goes back to its caller.
        if (!t.startsWith(RESULT_PREFIX)) o.log?.(t);
      },
      stderr: (t) => {
        if (stderr.length < 4096) stderr += t;
      },
    });
    const payload = scanner.end();
    served++;
    if (payload !== undefined && code === 0) return { status: 200, body: payload };
    return { status: 500, body: JSON.stringify({ error: `exit ${code}: ${stderr.trim().slice(-1000) || 'no result line'}` }) };
  }

  const stopped = pod.stopped.then((reason) => ({ reason, served }));
  const address = await pod.listen(o.port, o.host);
  life.armIdle();
  return { address, stopped, stop: (reason) => life.stop(reason) };
}

/**
 * The export Job's server: on the Pod address, it serves ONE download to a caller bearing the
 * Job's token, then stops; nobody coming within the idle period stops it too. The token is
 * checked first (the same constant-time digest check as the browse server), so a caller without
 * it learns nothing about paths, methods or state.
 *
 * Wire: `GET /download` with `Authorization: Bearer <token>`, and optionally `Range` / `If-Range`.
 * The answer is the download itself (200, or 206 / 416 for a file's range; its type,
 * `Content-Length` when known, `ETag` and `Accept-Ranges`) or a refusal: 422 with the Result JSON (`code`,
 * `error`) exactly as a file op prints it. A download that fails part way is cut off (the
 * connection is destroyed before the body is complete), so the receiver can never take a
 * partial body for a whole one. 401 without the token, 404/405 for other paths and methods,
 * 409 once the download has been claimed, 413 for a request with a body.
 * @module
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type RangeAsk, rangeAsk } from '../../lib/protocol/range.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { resultBody, send } from '../http/answer.ts';
import { carriesBody } from '../http/body.ts';
import type { StopReason } from '../http/lifecycle.ts';
import { PodServer } from '../http/listen.ts';

/** `lifetime` never comes: an export has no lifetime of its own. */
export type ExportStopReason = StopReason | 'served';

/** How one download ended: its Result (a refusal or the totals), or a failure part way. */
export type DownloadOutcome = { result: Result } | { failed: string };

export interface ExportServeOptions {
  host: string;
  port: number;
  tokenSha256: string;
  /** Stop after this long without the download being claimed. */
  idleMs: number;
  /**
   * Writes the download (or its refusal) to `res`; resolves once it has ended either way. `ask`:
   * the request's `Range` / `If-Range`, bounded (lib/protocol/range.ts decides what they mean).
   */
  serve: (res: http.ServerResponse, signal: AbortSignal, ask: RangeAsk) => Promise<DownloadOutcome>;
}

export interface ExportServing {
  address: AddressInfo;
  /** Settles once stopped: why, and the download's outcome when there was one. */
  stopped: Promise<{ reason: ExportStopReason; outcome?: DownloadOutcome }>;
  stop(reason?: ExportStopReason): void;
}

/** Sends a refusal Result (`code`, `error`) as the Job would print it. */
export function sendRefusal(res: http.ServerResponse, r: Result): void {
  send(res, 422, resultBody(r));
}

export async function startExportServing(o: ExportServeOptions): Promise<ExportServing> {
  let claimed = false;
  let outcome: DownloadOutcome | undefined;
  const abort = new AbortController();
  // One download, then done: no lifetime of its own (the Job's deadline bounds it).
  const pod = new PodServer<'served'>({
    tokenSha256: o.tokenSha256,
    requestTimeoutMs: 15_000,
    keepAliveTimeoutMs: 1_000,
    oneRequestPerConnection: true,
    life: {
      idleMs: o.idleMs,
      graceMs: 1_000,
      // A signal mid-download ends it: the receiver sees a cut-off body, never a short whole one.
      onStop: (reason) => abort.abort(new Error(`stopped (${reason})`)),
    },
  });
  const { life } = pod;
  life.armIdle();
  const stop = (reason?: ExportStopReason) => life.stop(reason);

  pod.route('GET', '/download', async (req, res) => {
    if (carriesBody(req)) return send(res, 413, '{"error":"requests carry no body"}');
    if (claimed || life.stopping) return send(res, 409, '{"error":"the download was already claimed"}');
    claimed = true;
    life.holdIdle();
    // The receiver going away before the download was all handed over ends the work at once
    // (one that hangs up after reading to the end may do so before this side's 'finish').
    res.once('close', () => {
      if (!res.writableEnded) abort.abort(new Error('the receiver went away'));
    });
    try {
      outcome = await o.serve(res, abort.signal, rangeAsk(req.headers.range, req.headers['if-range']));
    } catch (e) {
      outcome = { failed: e instanceof Error ? e.message : String(e) };
    }
    if ('failed' in outcome && !res.writableFinished) res.destroy();
    stop('served');
  });

  const stopped = pod.stopped.then((reason) => ({ reason, ...(outcome ? { outcome } : {}) }));
  return { address: await pod.listen(o.port, o.host), stopped, stop };
}

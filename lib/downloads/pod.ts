/**
 * Reaching a download's export Pod: found by its export id and asked for the download with the
 * Job's token (lib/files/serving-pod.ts), its failures named as a download's. The caller's `Range`
 * and `If-Range` (bounded) are the only request headers passed on. The answer's body is handed on
 * unread: the caller streams it.
 * @module
 */
import type http from 'node:http';
import { askPod, PodEndedError, type PodLister, PodTimeoutError, waitForPodAddress } from '../files/serving-pod.ts';
import { LABEL_EXPORT_ID } from '../job-spec/export-job.ts';
import type { RangeAsk } from '../protocol/range.ts';

export type { PodLister };

/** The export Pod ended, or never served, before the download could be had (→ 500, detail logged). */
export class ExportPodError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExportPodError';
  }
}

/** The export Pod did not serve in time (→ 504 export_timeout). */
export class ExportTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExportTimeoutError';
  }
}

const asExport = (err: unknown): unknown => (err instanceof PodTimeoutError ? new ExportTimeoutError(err.message) : err instanceof PodEndedError ? new ExportPodError(err.message) : err);

/** The running export Pod's address, once it has one. */
export async function waitForExportPod(api: PodLister, namespace: string, exportId: string, deadline: number, signal: AbortSignal): Promise<string> {
  try {
    return await waitForPodAddress(api, namespace, `${LABEL_EXPORT_ID}=${exportId}`, 'export', deadline, signal);
  } catch (err) {
    throw asExport(err);
  }
}

/** `GET /download` on the Pod with the token, retried while the program does not listen yet, until `deadline`. */
export async function requestDownload(ip: string, port: number, token: string, deadline: number, signal: AbortSignal, ask: RangeAsk = {}): Promise<http.IncomingMessage> {
  // Only the range headers go on, and only as bounded by rangeAsk: the Pod decides what they mean.
  const headers: Record<string, string> = {};
  if (ask.range !== undefined) headers.range = ask.range;
  if (ask.ifRange !== undefined) headers['if-range'] = ask.ifRange;
  try {
    return await askPod({ ip, port, path: '/download', token, headers, what: 'export' }, deadline, signal);
  } catch (err) {
    throw asExport(err);
  }
}

/**
 * The process is stopping (SIGTERM/SIGINT, lib/http/serve.ts stopOnSignals): long answers (a log
 * follow's event stream) end on this signal with a last event, so the server's close is not held
 * for their whole life and their callers reconnect, with their last event id, to another instance.
 * @module
 */
const stop = new AbortController();

/** Aborted once the process has been asked to stop. */
export const stopping: AbortSignal = stop.signal;

/** Called by the signal handler; then by tests. */
export function markStopping(): void {
  stop.abort(new Error('the server is stopping'));
}

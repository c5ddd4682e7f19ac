/**
 * Waiting between polls: one `sleep` for every loop in lib/ that asks the cluster again.
 * @module
 */

/** Resolves after `ms`; an abort of `signal` (also one that came before) rejects with its reason at once. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

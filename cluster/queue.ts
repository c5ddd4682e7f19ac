/**
 * A small keyed work queue for the controllers, after client-go's: a key queued several times is
 * processed once, handlers run one at a time and asynchronously (never inside the store write that
 * triggered them), a failed key is retried with backoff, and `after()` schedules a later pass.
 *
 * @module
 */

export class WorkQueue {
  private readonly handler: (key: string) => void | Promise<void>;
  private readonly onError: (key: string, err: unknown) => void;
  private readonly pending = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly failures = new Map<string, number>();
  private running = false;
  private scheduled = false;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];

  constructor(handler: (key: string) => void | Promise<void>, onError: (key: string, err: unknown) => void) {
    this.handler = handler;
    this.onError = onError;
  }

  add(key: string): void {
    if (this.stopped) return;
    this.pending.add(key);
    this.kick();
  }

  /** Queue `key` after `ms`; an earlier pending timer for the same key is kept if it fires sooner. */
  after(key: string, ms: number, replace = false): void {
    if (this.stopped) return;
    const existing = this.timers.get(key) as (NodeJS.Timeout & { at?: number }) | undefined;
    const at = Date.now() + ms;
    if (existing && !replace && (existing.at ?? 0) <= at) return;
    if (existing) clearTimeout(existing);
    const t = setTimeout(
      () => {
        this.timers.delete(key);
        this.add(key);
      },
      Math.max(0, ms),
    ) as NodeJS.Timeout & { at?: number };
    t.at = at;
    t.unref?.();
    this.timers.set(key, t);
  }

  private kick(): void {
    if (this.running || this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    try {
      while (this.pending.size > 0 && !this.stopped) {
        const key = this.pending.values().next().value as string;
        this.pending.delete(key);
        try {
          await this.handler(key);
          this.failures.delete(key);
        } catch (err) {
          const n = (this.failures.get(key) ?? 0) + 1;
          this.failures.set(key, n);
          this.onError(key, err);
          if (n < 20) this.after(key, Math.min(5 * 2 ** n, 1000));
        }
      }
    } finally {
      this.running = false;
      if (this.pending.size > 0) this.kick();
      else for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.pending.clear();
    for (const w of this.idleWaiters.splice(0)) w();
  }
}

/**
 * The world lock a mutation holds, carried through the call without touching every route: the
 * gates run the mutation inside `withHeldLock` (lib/maintenance/file-gates.ts), and the file editor
 * reads `heldLock()` to decide whether an edit session may make the change: only a caller holding
 * a `file-write` lock on that server's world may call one, and the call carries the lock's value
 * for the Pod to check. Request-scoped only; the lock itself is the annotation on the server.
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface HeldLock {
  server: string;
  /** The holder kind written (`file-write`, `config-write`). */
  kind: string;
  /** The annotation's value: `<kind>@<RFC 3339>`, as written or as the world's line re-dated it since. */
  value: string;
  /**
   * Leave the lock to lapse after its grace instead of releasing it: the change may still be
   * under way in a Pod that never answered, and the world must stay held while it can be.
   */
  keep(): void;
}

const scope = new AsyncLocalStorage<HeldLock>();

export function withHeldLock<T>(held: HeldLock, fn: () => T): T {
  return scope.run(held, fn);
}

/** The lock the current call holds on `server`'s world, if any. */
export function heldLock(server: string): HeldLock | undefined {
  const h = scope.getStore();
  return h && h.server === server ? h : undefined;
}

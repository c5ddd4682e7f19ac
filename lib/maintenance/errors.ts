/**
 * Why maintenance refused, as typed domain errors (lib/http/error-map.ts gives each its status).
 * @module
 */
import { DomainError } from '../errors.ts';
import { describeHolder, type HolderActivity, type HolderKind } from './holder.ts';

/**
 * The world is held (→ 409 maintenance_in_progress, or world_reclaiming for the reaper on a start).
 * The message names the holder, a file Job by its op and path; `kind` is what callers act on.
 */
export class MaintenanceBusyError extends DomainError {
  readonly kind: HolderKind | undefined;
  readonly activity: HolderActivity | undefined;
  /** Refused because other admissions kept winning the race for the lock, not for a holder seen. */
  readonly contended: boolean;
  constructor(kind?: HolderKind, activity?: HolderActivity, opts: { contended?: boolean; retryAfterSeconds?: number; message?: string } = {}) {
    super('maintenance_in_progress', 'conflict', opts.message ?? `${kind ? describeHolder(kind, activity) : 'another operation'} is running on this server's world; retry once it finishes`, {
      ...(opts.retryAfterSeconds !== undefined ? { retryAfterSeconds: opts.retryAfterSeconds } : {}),
    });
    this.name = 'MaintenanceBusyError';
    this.kind = kind;
    this.activity = activity;
    this.contended = opts.contended ?? false;
  }
}

export class NotStoppedError extends DomainError {
  constructor(message = 'stop the server before working with its files') {
    super('not_stopped', 'conflict', message);
    this.name = 'NotStoppedError';
  }
}

export class ServerNotFoundError extends DomainError {
  constructor(name: string) {
    super('not_found', 'not_found', `server ${name} does not exist`, { callerMessage: 'no such server' });
    this.name = 'ServerNotFoundError';
  }
}

export class NoWorldVolumeError extends DomainError {
  constructor() {
    super('no_world_volume', 'conflict', 'this server has no world volume yet — start it once to create it, then retry');
    this.name = 'NoWorldVolumeError';
  }
}

/** A `migration@` lock: Felis is moving the world, and only Felis may remove it. */
export class LockProtectedError extends DomainError {
  constructor() {
    super('lock_protected', 'conflict', 'the world is locked for a migration; only Felis removes that lock');
    this.name = 'LockProtectedError';
  }
}

/** A lock younger than Grace: its owner may still be between admission and its Job. */
export class LockFreshError extends DomainError {
  constructor() {
    super('lock_fresh', 'conflict', 'the lock was taken less than 2 minutes ago and may still be in use; wait for it to lapse, or retry with ?force=true');
    this.name = 'LockFreshError';
  }
}

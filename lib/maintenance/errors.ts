/**
 * Why maintenance refused, as typed domain errors (lib/http/error-map.ts gives each its status).
 * @module
 */
import { DomainError } from '../errors.ts';
import { describeHolder, type Holder, type HolderActivity, type HolderKind } from './holder.ts';
import { retryAfterSeconds } from './retry-after.ts';

/**
 * The world is held (→ 409 maintenance_in_progress, or world_reclaiming for the reaper on a start).
 * The message names the holder, a file Job by its op and path; `kind` is what callers act on.
 * `retryAfterSeconds` says when to try again (retry-after.ts): `heldBy` reckons it from the holder.
 */
export class MaintenanceBusyError extends DomainError {
  readonly kind: HolderKind | undefined;
  readonly activity: HolderActivity | undefined;
  /** Refused because other admissions kept winning the race for the lock, not for a holder seen. */
  readonly contended: boolean;
  constructor(kind?: HolderKind, activity?: HolderActivity, opts: { contended?: boolean; retryAfterSeconds?: number; message?: string } = {}) {
    const retry = opts.retryAfterSeconds ?? retryAfterSeconds(kind === undefined ? undefined : { kind, source: 'job' }, new Date(), opts);
    super('maintenance_in_progress', 'conflict', opts.message ?? `${kind ? describeHolder(kind, activity) : 'another operation'} is running on this server's world; retry once it finishes`, {
      retryAfterSeconds: retry,
    });
    this.name = 'MaintenanceBusyError';
    this.kind = kind;
    this.activity = activity;
    this.contended = opts.contended ?? false;
  }

  /** Refused for `holder`, seen at `now`: a lock's Grace bounds when to try again. */
  static heldBy(holder: Holder, now: Date): MaintenanceBusyError {
    return new MaintenanceBusyError(holder.kind, holder.activity, { retryAfterSeconds: retryAfterSeconds(holder, now) });
  }
}

/**
 * A read of a running server whose claim only one Pod may mount (`ReadWriteOncePod`): the game's
 * Pod has it, so a read Job could never start beside it.
 */
export class VolumeExclusiveError extends DomainError {
  constructor(claim: string) {
    super(
      'volume_exclusive',
      'conflict',
      `the world volume ${claim} is ReadWriteOncePod: only the running game's Pod may mount it, so its files cannot be read while the server runs; stop the server first`,
      { callerMessage: "this server's world volume is ReadWriteOncePod: only the running game's Pod may mount it, so its files cannot be read while the server runs; stop the server first" },
    );
    this.name = 'VolumeExclusiveError';
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

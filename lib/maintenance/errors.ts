/**
 * Why maintenance refused, as typed errors the HTTP layer maps (felis-behaviour §7.7).
 * @module
 */
import { holderLabel, type HolderKind } from './holder.ts';

/** The world is held (→ 409 maintenance_in_progress, or world_reclaiming for the reaper on a start). */
export class MaintenanceBusyError extends Error {
  readonly kind: HolderKind | undefined;
  constructor(kind?: HolderKind) {
    super(`${kind ? holderLabel(kind) : 'another operation'} is running on this server's world; retry once it finishes`);
    this.name = 'MaintenanceBusyError';
    this.kind = kind;
  }
}

export class NotStoppedError extends Error {
  constructor(message = 'stop the server before working with its files') {
    super(message);
    this.name = 'NotStoppedError';
  }
}

export class ServerNotFoundError extends Error {
  constructor(name: string) {
    super(`server ${name} does not exist`);
    this.name = 'ServerNotFoundError';
  }
}

export class NoWorldVolumeError extends Error {
  constructor() {
    super('this server has no world volume yet — start it once to create it, then retry');
    this.name = 'NoWorldVolumeError';
  }
}

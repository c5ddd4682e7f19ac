/**
 * What a mutation Job is told about the undo trash (job/trash/), in its env: whether it is on, how
 * long a record is kept, and who asked for the op (kept in the record). Both sides are here: the
 * functions write these from their config and the caller, the Job program reads them.
 *
 * A Job told nothing (Felis's own Job, or a spec from before the trash) keeps the trash on with the
 * default time and an empty actor: a destructive op is recoverable unless the operator said off.
 * @module
 */
import type { EnvVar } from './content-env.ts';

export const TRASH_ENV = 'FELIS_TRASH';
export const TRASH_SECONDS_ENV = 'FELIS_TRASH_SECONDS';
export const ACTOR_ENV = 'FELIS_ACTOR';

/** Seven days. */
export const DEFAULT_TRASH_SECONDS = 7 * 24 * 3600;
/** An actor name longer than this is cut: it is a record's label, not an identity check. */
export const MAX_ACTOR_CHARS = 256;
/** A record id: its time in ms as 12 hex digits, then 4 random ones. */
export const TRASH_ID = /^[0-9a-f]{16}$/;

export interface TrashSettings {
  enabled: boolean;
  seconds: number;
  actor: string;
}

export class TrashEnvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TrashEnvError';
  }
}

/** `on`/`off` (also true/false, 1/0); empty or absent is on. */
export function parseTrashEnabled(v: string | undefined): boolean {
  const t = (v ?? '').trim().toLowerCase();
  if (t === '' || t === 'on' || t === 'true' || t === '1') return true;
  if (t === 'off' || t === 'false' || t === '0') return false;
  throw new TrashEnvError(`${TRASH_ENV} must be on or off, not ${JSON.stringify(v)}`);
}

/** Whole seconds, at least 60 and at most ten years; empty or absent is the default. */
export function parseTrashSeconds(v: string | undefined): number {
  const t = (v ?? '').trim();
  if (t === '') return DEFAULT_TRASH_SECONDS;
  if (!/^\d{1,10}$/.test(t) || Number(t) < 60 || Number(t) > 10 * 366 * 24 * 3600) {
    throw new TrashEnvError(`${TRASH_SECONDS_ENV} must be a whole number of seconds from 60 to 316224000, not ${JSON.stringify(v)}`);
  }
  return Number(t);
}

/** The settings from an env; throws TrashEnvError on a value that is neither. */
export function readTrashEnv(env: Readonly<Record<string, string | undefined>>): TrashSettings {
  return {
    enabled: parseTrashEnabled(env[TRASH_ENV]),
    seconds: parseTrashSeconds(env[TRASH_SECONDS_ENV]),
    actor: (env[ACTOR_ENV] ?? '').slice(0, MAX_ACTOR_CHARS),
  };
}

/** The env a mutation Job carries for them. */
export function encodeTrashEnv(s: TrashSettings): EnvVar[] {
  return [
    { name: TRASH_ENV, value: s.enabled ? 'on' : 'off' },
    { name: TRASH_SECONDS_ENV, value: String(s.seconds) },
    ...(s.actor ? [{ name: ACTOR_ENV, value: s.actor.slice(0, MAX_ACTOR_CHARS) }] : []),
  ];
}

/**
 * What a MinecraftServer's fields mean for maintenance. Pure.
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { MinecraftServer } from '../kube/servers.ts';

/** Felis's system servers: their live experience file may be saved while they run. */
export const SYSTEM_SERVERS = new Set(['login', 'lobby']);

/** An empty desired state counts as Stopped. */
export function desiredState(s: MinecraftServer): string {
  return s.spec?.desiredState || 'Stopped';
}

/** The entry gate's view (felis-behaviour §8.2): refuse when ready or not desired Stopped. */
export function stoppedForEntry(s: MinecraftServer): boolean {
  return !s.status?.ready && desiredState(s) === 'Stopped';
}

/**
 * Admission's stricter view (§7.5): desired Stopped, not ready, phase Stopped, and no game Pod —
 * a terminating Pod still counts, since it may still have the world mounted.
 */
export function fullyStopped(s: MinecraftServer, gamePods: V1Pod[]): boolean {
  return desiredState(s) === 'Stopped' && !s.status?.ready && s.status?.phase === 'Stopped' && gamePods.length === 0;
}

/** The world claim: `spec.worldClaim`, else Felis's convention `world-<server>-0`. */
export function worldClaim(s: MinecraftServer | undefined, name: string): string {
  return s?.spec?.worldClaim || `world-${name}-0`;
}

/** Selects a server's game Pods (not its Jobs' Pods, whose component is different). */
export function gamePodSelector(server: string): string {
  return `felis.lolicon.best/server=${server},app.kubernetes.io/component=server`;
}

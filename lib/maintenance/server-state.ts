/**
 * What a MinecraftServer's state means for maintenance. Pure.
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

/**
 * The entry gate's view: refuse when ready or not desired Stopped. A server still stopping passes
 * here (reads may go on); mutations meet the stricter `fullyStopped` at admission.
 */
export function stoppedForEntry(s: MinecraftServer): boolean {
  return !s.status?.ready && desiredState(s) === 'Stopped';
}

/**
 * Admission's stricter view: desired Stopped, not ready, phase Stopped, and no game Pod —
 * a terminating Pod still counts, since it may still have the world mounted.
 */
export function fullyStopped(s: MinecraftServer, gamePods: V1Pod[]): boolean {
  return desiredState(s) === 'Stopped' && !s.status?.ready && s.status?.phase === 'Stopped' && gamePods.length === 0;
}

/**
 * Where felis-world reads Felis's own objects: the labels of a game Pod, where a server's world
 * claim and execution node come from, and the annotation of a pending restart. Felis's operator
 * and API write these; a wrong guess here lets a write in beside a running game, so every other
 * module takes them from this one place. Pure.
 * @module
 */
import type { MinecraftServer } from '../kube/servers.ts';

/** Felis's operator puts these on every game Pod (not on Jobs, which use app.kubernetes.io/*). */
export const GAME_POD_SERVER_LABEL = 'felis.lolicon.best/server';
export const GAME_POD_COMPONENT_LABEL = 'felis.lolicon.best/component';
export const GAME_POD_COMPONENT = 'server';

/**
 * Selects a server's game Pods, terminating ones included: a Pod on its way down may still be
 * saving the world, so it must keep refusing admission until it is gone.
 */
export function gamePodSelector(server: string): string {
  return `${GAME_POD_SERVER_LABEL}=${server},${GAME_POD_COMPONENT_LABEL}=${GAME_POD_COMPONENT}`;
}

/** The world claim: `spec.storage.claimName` when set, else Felis's naming `world-<server>-0`. */
export function worldClaim(s: MinecraftServer | undefined, name: string): string {
  return s?.spec?.storage?.claimName || `world-${name}-0`;
}

/**
 * The node a Job on this world runs on: the administrator's `spec.nodeName`, else the node the
 * operator last ran the game on (`status.nodeName`), else the controller node; undefined (no pin)
 * when none of them is known.
 */
export function executionNode(s: MinecraftServer, controllerNode?: string): string | undefined {
  return s.spec?.nodeName || s.status?.nodeName || controllerNode || undefined;
}

/** Felis's restart endpoint sets this while a restart is pending; it refuses every admission. */
export const DEFAULT_RESTART_ANNOTATION = 'felis.lolicon.best/restart';

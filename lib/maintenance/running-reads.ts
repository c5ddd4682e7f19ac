/**
 * Reads beside a running game, the rule in one place. A list, read, search, trash listing or
 * download mounts the world read-only and runs pinned to the server's node (contracts.ts
 * `executionNode`), where a ReadWriteOnce claim may be mounted by several Pods: a server starting
 * beside one cannot hurt either side. So they are let in while the server runs or starts, unless
 * the operator keeps Felis's stricter gate (`FELIS_READ_WHILE_RUNNING=off`). Changes never are.
 * The holder rule does not change: read Jobs and browse Pods hold nothing, and a download's export
 * Job holds the world as `export`, as it does for a stopped one (lib/downloads/admission.ts).
 *
 * Two limits remain. A claim that only one Pod may mount (`ReadWriteOncePod`) is the game's while
 * it runs: a read Job could never start, so the read is refused. And a running world is not a
 * consistent one (the game rewrites region files in place), so the answer says the world was
 * running. Pure.
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { WorldState } from '../job-spec/types.ts';
import type { MinecraftServer } from '../kube/servers.ts';
import { mutates, type Op } from '../protocol/ops.ts';
import { fullyStopped } from './server-state.ts';

/** The access mode that lets exactly one Pod mount a claim (Kubernetes 1.22 and later). */
export const EXCLUSIVE_ACCESS_MODE = 'ReadWriteOncePod';

/** An op that may run beside the running game: one that only reads the world. */
export function readsBesideGame(op: Op): boolean {
  return !mutates(op);
}

/** A claim no second Pod may mount while the game has it. */
export function exclusiveClaim(accessModes: readonly string[]): boolean {
  return accessModes.includes(EXCLUSIVE_ACCESS_MODE);
}

/**
 * What a read of the world may race: `stopped` only when the server is fully stopped (desired
 * Stopped, not ready, phase Stopped, and no game Pod among `gamePods` when they were listed);
 * anything else, a server still stopping included, may still be saving the world.
 */
export function worldStateOf(s: MinecraftServer, gamePods: V1Pod[] = []): WorldState {
  return fullyStopped(s, gamePods) ? 'stopped' : 'running';
}

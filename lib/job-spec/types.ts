/**
 * The shapes every Job-making module shares, apart from the logic that uses them: the server and
 * world a Job is made for, and the configuration part of a Job's render parameters.
 * @module
 */
import type { JobParams } from './render.ts';

export interface World {
  claim: string;
  node?: string;
}

/**
 * What a read of a world may race: nothing else writes it (`stopped`), or the game may be saving
 * it (`running`: running, starting or still stopping, when reads are let in beside the game).
 */
export type WorldState = 'stopped' | 'running';

/** A server and where its world lives, as the entry gate resolved them. */
export interface Target {
  server: string;
  world: World;
  /** The server's state as the entry gate read it; absent: stopped. */
  worldState?: WorldState;
}

/** How every file Job is shaped, whatever the op (the configuration part of JobParams). */
export type JobSettings = Pick<
  JobParams,
  'namespace' | 'image' | 'command' | 'serviceAccount' | 'worldsRoot' | 'deadlineSeconds' | 'ttlSeconds' | 'cpu' | 'memory' | 'runAsUser' | 'runAsGroup' | 'fsGroup' | 'pullEnv' | 'trash'
>;

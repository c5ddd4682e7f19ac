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

/** A server and where its world lives, as the entry gate resolved them. */
export interface Target {
  server: string;
  world: World;
}

/** How every file Job is shaped, whatever the op (the configuration part of JobParams). */
export type JobSettings = Pick<
  JobParams,
  'namespace' | 'image' | 'command' | 'serviceAccount' | 'worldsRoot' | 'deadlineSeconds' | 'ttlSeconds' | 'cpu' | 'memory' | 'runAsUser' | 'runAsGroup' | 'fsGroup' | 'pullEnv' | 'trash'
>;

/**
 * The file Jobs' resource defaults and limits, and the quantity grammar the settings are checked
 * by. Apart from render.ts so that reading the configuration (every function, before its first
 * answer) does not load the Job renderer and every op's contract with it.
 * @module
 */

export const DEFAULT_CPU = '500m';
export const DEFAULT_MEMORY = '256Mi';

/**
 * A background op (an archive of a whole world) may run for hours: 2 h before the Job is stopped,
 * a full CPU, and its outcome kept 30 min after it ends so the ops listing can show it.
 */
export const ASYNC_DEADLINE_SECONDS = 7200;
export const ASYNC_TTL_SECONDS = 1800;
export const ASYNC_CPU = '1';

// Kubernetes resource.Quantity grammar: a signed decimal number with an optional suffix.
/** A Kubernetes resource quantity (`500m`, `2`, `1.5`, `256Mi`, `1e3`). */
export const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/;

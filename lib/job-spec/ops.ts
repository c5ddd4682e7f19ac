/**
 * The closed set of file operations a file Job performs, and what each one implies.
 * @module
 */

export const OPS = ['list', 'read', 'write', 'mkdir', 'delete', 'rename', 'upload', 'unzip', 'zip', 'search', 'copy', 'delete-many', 'move-many', 'chmod-many', 'pull', 'compress', 'trash-list', 'trash-restore', 'trash-purge', 'pull-place'] as const;
export type Op = (typeof OPS)[number];

export function isOp(v: string): v is Op {
  return (OPS as readonly string[]).includes(v);
}

/** Every op but list, read, search and trash-list changes the world: RW mount, a holder Job, a lock while admitted. */
export function mutates(op: Op): boolean {
  return op !== 'list' && op !== 'read' && op !== 'search' && op !== 'trash-list';
}

/**
 * A mutation that holds the world while it runs: every one but a pull, which writes only a staging
 * folder of its own (docs/pulls.md) and holds nothing, for Felis or for felis-world; what it fetched
 * is placed later by `pull-place`, which does hold the world.
 */
export function holdsWorld(op: Op): boolean {
  return mutates(op) && op !== 'pull';
}

/** CHOWN is added only where new files or folders are created (a restore may remake the folders above what it puts back); delete and rename (one or many) only need DAC_OVERRIDE. */
export function needsChown(op: Op): boolean {
  return op === 'write' || op === 'mkdir' || op === 'upload' || op === 'unzip' || op === 'zip' || op === 'copy' || op === 'pull' || op === 'compress' || op === 'trash-restore';
}

/** A change of mode needs FOWNER: the Job runs as root, and the files are the game's uid's. */
export function needsFowner(op: Op): boolean {
  return op === 'chmod-many';
}

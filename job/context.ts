/**
 * The context every op runs with: the open world root and the system calls (tests replace the
 * same ones). `execute` and the upload receiver both open it here.
 * @module
 */
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { syncVolume } from './archive/sync-volume.ts';
import { WorldRoot } from './root.ts';
import type { ExecuteOptions, OpContext } from './types.ts';

/** Opens the root; throws (an infrastructure failure) when it cannot. Close `ctx.root` when done. */
export function openContext(worldsRoot: string, opts: ExecuteOptions = {}): OpContext {
  let root: WorldRoot;
  try {
    root = WorldRoot.open(worldsRoot, { beforeStep: opts.beforeStep });
  } catch (e) {
    throw new Error(`open world root ${worldsRoot}: ${(e as Error).message}`, { cause: e });
  }
  return {
    root,
    statfs: opts.statfs ?? ((p) => fs.statfsSync(p, { bigint: true })),
    chown: opts.chown ?? ((p, uid, gid) => fs.lchownSync(p, uid, gid)),
    fsync: opts.fsync ?? ((fd) => fs.fsyncSync(fd)),
    randomBytes: opts.randomBytes ?? ((n) => randomBytes(n)),
    rename: opts.rename ?? ((from, to) => fs.renameSync(from, to)),
    syncfs: opts.syncfs ?? syncVolume,
    progress: opts.progress ?? (() => {}),
  };
}

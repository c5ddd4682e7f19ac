/**
 * The context every op runs with: the open world root and the system calls (tests replace the
 * same ones). `execute` and the upload receiver both open it here.
 * @module
 */

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { formatRecoveredLine } from '../../lib/protocol/recovered.ts';
import { DEFAULT_TRASH_SECONDS } from '../../lib/protocol/trash-env.ts';
import type { JournalHooks } from '../journal/journal.ts';
import { type Recovered, recoverAll } from '../journal/recover.ts';
import { exitStopped, StopGate } from '../journal/stop.ts';
import type { ExecuteOptions, OpContext } from '../runtime/types.ts';
import { recoverTrash } from '../trash/recover.ts';
import { keepReplaced } from '../trash/replaced.ts';
import { WorldRoot } from '../volume/root.ts';
import { syncVolume } from '../volume/sync-volume.ts';

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
    stop: new StopGate(opts.onStopExit ?? exitStopped),
    journalStep: opts.journalStep,
    opId: opts.opId,
    listIndexes: opts.listIndexes,
    warm: opts.warm,
    trash: opts.trash ?? { enabled: true, seconds: DEFAULT_TRASH_SECONDS, actor: '' },
    now: opts.now ?? Date.now,
  };
}

/**
 * For a Job that mounts the world read-write, before anything else: finishes or undoes every op a
 * stopped Job left half-placed (job/journal/recover.ts), so this one starts from the tree before
 * or after it. Throws (an infrastructure failure) when one cannot be.
 */
export function recoverWorld(ctx: OpContext): Recovered[] {
  let recovered: Recovered[];
  try {
    recovered = recoverAll(ctx.root, journalHooks(ctx));
    // Then the undo trash: unfinished records settled, expired ones purged (job/trash/recover.ts).
    recoverTrash(ctx);
  } catch (e) {
    throw new Error(`finish an interrupted op on the world: ${(e as Error).message}`, { cause: e });
  }
  reportRecovered(ctx, recovered);
  return recovered;
}

/** The system calls a placement journal of this Job uses, and where what it replaced goes. */
export function journalHooks(ctx: OpContext): JournalHooks {
  return {
    rename: ctx.rename,
    fsync: ctx.fsync,
    syncfs: ctx.syncfs,
    step: ctx.journalStep,
    keepReplaced: (baseFd, header, aside) => keepReplaced(ctx, baseFd, header, aside),
  };
}

/** Says what recovery made of each interrupted op, so whoever reads this Job's log can record it. */
export function reportRecovered(ctx: OpContext, recovered: Recovered[]): void {
  for (const r of recovered) {
    if (r.id) ctx.progress(formatRecoveredLine({ op: r.id, kind: r.op, now: r.now }));
  }
}

/** `openContext`, then `recoverWorld`: what every read-write mode opens. */
export function openWritableContext(worldsRoot: string, opts: ExecuteOptions = {}): OpContext {
  const ctx = openContext(worldsRoot, opts);
  try {
    recoverWorld(ctx);
  } catch (e) {
    ctx.root.close();
    throw e;
  }
  return ctx;
}

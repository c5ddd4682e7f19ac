/**
 * The placement journal of a many-file delete or move (job/journal/journal.ts, docs/journal.md):
 * every move of the batch is written down before the first is made, so whatever stops the Job
 * (in a one-shot Job or an edit session's call alike), the next Job that mounts the world
 * read-write finishes or undoes the whole batch before anything else. The world is then the tree
 * before the batch or the tree after it, never a mix.
 *
 * The journal's base is the world root, and every path in it is root-relative as the kernel names
 * it (no links): the root is never replaced or removed, so a recovery never finds its base gone
 * or another folder, wherever the batch's items are. A delete moves each item aside into a working
 * folder at the root (`<work>/old/<k>`, on the root's volume: the caller journals only items on
 * it); once committed, they go into the undo trash as the one record written down before the plan
 * was sealed (job/trash/replaced.ts), or are removed with the working folder when the trash is off
 * or not ours. A move is one rename from its source to its new name.
 *
 * A move that fails within the Job undoes the moves made, and the batch is refused with that
 * item's code and path: nothing of it changed. When the journal cannot be written at all (a full
 * volume: a delete must still be able to free room) the caller makes the batch item by item, as
 * before the journal.
 *
 * @module
 */
import fs from 'node:fs';
import { Journal, type JournalHooks, type Move, UndoError } from '../../../job/journal/journal.ts';
import { journalHooks } from '../../../job/op-kit/context.ts';
import type { OpContext } from '../../../job/runtime/types.ts';
import { beginRecord, type Incoming, resumeIntake } from '../../../job/trash/store.ts';
import { bestEffort, writeFailure } from '../../../job/volume/failure.ts';
import { atPath } from '../../../job/volume/root.ts';
import { WORK_PREFIX } from '../../../job/volume/work-folder.ts';
import type { Result } from '../../../lib/protocol/result.ts';

/** One item of a batch as the journal moves it. */
export interface BatchMove {
  /** The path as the caller gave it: a refusal names it. */
  item: string;
  /** Root-relative, as the kernel names it. */
  from: string;
  /** Where a move goes, root-relative as the kernel names it; absent for a delete's item (moved aside). */
  to?: string;
}

/** What became of a journaled batch: every move made (and the trash record that holds the deleted), or refused with nothing changed. */
export type Applied = { trashId?: string } | { refusal: Result };

/**
 * A batch touches few folders: their fsyncs cost less than one syncfs of the whole volume (a
 * process of its own, `sync -f`), so the journal makes its moves durable folder by folder.
 */
function batchHooks(ctx: OpContext): JournalHooks {
  return {
    ...journalHooks(ctx),
    syncfs: () => {
      throw new Error('a batch fsyncs the folders it touched');
    },
  };
}

/** The working folder of a delete's items, `<root>/<work>/old/`: 0700 and the Job user's, as the sweep knows ours. */
function makeWorkFolder(ctx: OpContext, work: string): void {
  for (const p of [work, `${work}/old`]) {
    fs.mkdirSync(atPath(ctx.root.fd, p), 0o700);
    fs.chmodSync(atPath(ctx.root.fd, p), 0o700); // the umask may have narrowed it; ours is exactly 0700
  }
  // Durable before any item is moved into it: a rename into a folder that a crash lost cannot survive.
  const fd = fs.openSync(atPath(ctx.root.fd, work), fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    bestEffort(() => ctx.fsync(fd));
  } finally {
    fs.closeSync(fd);
  }
  bestEffort(() => ctx.fsync(ctx.root.fd));
}

/**
 * Makes `moves` all or nothing through a journal. `trash`: a delete's items as the undo trash lists
 * them, one for each move in order (each is moved aside). Null when the journal could not be
 * written: nothing has changed, and the caller goes item by item. Throws (an infrastructure
 * failure) when a failed batch could not be undone: its journal stays for the next Job.
 */
export function applyJournaled(ctx: OpContext, op: 'delete-many' | 'move-many', moves: BatchMove[], trash?: Incoming[]): Applied | null {
  const work = WORK_PREFIX + ctx.randomBytes(6).toString('hex');
  let journal: Journal;
  try {
    journal = Journal.begin(ctx.root.fd, ctx.root.fd, op, work, ctx.randomBytes(6).toString('hex'), batchHooks(ctx), ctx.opId);
  } catch {
    return null;
  }
  let trashId: string | undefined;
  let kept: string[] = [];
  try {
    if (moves.some((m) => m.to === undefined)) {
      try {
        makeWorkFolder(ctx, work);
      } catch {
        return null; // still staging: the finally removes what was made, and the journal
      }
    }
    // The record is written down before the plan is sealed, and the journal names it: whoever
    // finishes the batch puts its items into this one record.
    if (trash && trash.length > 0) {
      trashId = beginRecord(ctx, op, false, trash);
      if (trashId) journal.keepIn(trashId);
    }
    let k = 0;
    const items = new Map<string, string>();
    for (const m of moves) {
      const move: Move = m.to === undefined ? ['aside', m.from, `${work}/old/${k++}`] : ['move', m.from, m.to];
      items.set(move[1], m.item);
      journal.add(move);
    }
    try {
      journal.place();
    } catch (e) {
      // Only a move that failed and was undone is a refusal; anything else (an undo that failed,
      // the journal's own write after the moves) leaves the outcome to the next Job's recovery.
      if (e instanceof UndoError || journal.state !== 'undone') throw e;
      const failed = journal.failedMove;
      const item = failed ? (items.get(failed[1]) ?? failed[1]) : (moves[0]?.item ?? '.');
      const r = writeFailure(item, e, 'renameat');
      return { refusal: { code: r.code, error: `${r.error}; nothing of the batch was changed`, entry: item } };
    }
  } finally {
    // A journal left placing or undoing (an undo that failed) stays for the next Job; any other
    // state removes the working folder (what was deleted, unless the trash took it), then itself.
    if (journal.state !== 'placing' && journal.state !== 'undoing') {
      bestEffort(() => {
        kept = journal.finish();
      });
    }
    // A record begun for a batch that was not made (and never will be) holds nothing: it goes.
    if (trashId && (journal.state === 'staging' || journal.state === 'undone')) bestEffort(() => resumeIntake(ctx, trashId!)?.seal());
  }
  return kept.length > 0 ? { trashId: kept[0] } : {};
}

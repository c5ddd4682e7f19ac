/**
 * What a journaled op moved aside into its working folder (`old/<n>`), so a failure could put it
 * back, goes into the undo trash once the placement is committed and before that folder is
 * removed:
 *
 * - a many-file delete's items, into the one record (state `moving`) it wrote down before its plan
 *   was sealed (the journal names it), slot `n` for `old/<n>`: one record for the batch, whoever
 *   finishes it;
 * - what an extraction with `overwrite` replaced, into records made now, of at most RECORD_ITEMS
 *   items (one extraction replacing more makes several).
 *
 * A stop part way is safe either way round: an entry is in `old/` or in its slot, and the next Job
 * finishes the committed journal (which calls this again for what is still in `old/`) and settles
 * a half-filled record (recover.ts). What cannot go in (no trash, a record not ours, another
 * volume) stays in `old/` and is removed with the working folder, as without a trash.
 * @module
 */
import fs from 'node:fs';
import { asideSlot, type JournalHeader, type Move } from '../journal/journal.ts';
import type { OpContext } from '../runtime/types.ts';
import { atPath, identityOf } from '../volume/root.ts';
import { type Incoming, idText, resumeIntake, startIntake } from './store.ts';

export const RECORD_ITEMS = 10_000;

/** Returns the ids of the records that hold what was moved aside. */
export function keepReplaced(ctx: OpContext, baseFd: number, header: Readonly<JournalHeader>, aside: Iterable<Move>): string[] {
  if (header.trash !== undefined) return keepInRecord(ctx, baseFd, header, header.trash, aside);
  const ids: string[] = [];
  /** Each entry: where it was (relative to the base folder), where it is in old/, its lstat. */
  let batch: { was: string; aside: string; st: fs.BigIntStats }[] = [];
  const flush = () => {
    const items: Incoming[] = batch.map((b) => ({ path: header.base === '' ? b.was : `${header.base}/${b.was}`, st: b.st }));
    const intake = startIntake(ctx, header.op, true, items);
    if (intake) {
      batch.forEach((b, k) => {
        try {
          intake.move(k, atPath(baseFd, b.aside));
        } catch {
          // Left in old/: removed with the working folder, as without a trash.
        }
      });
      const id = intake.seal();
      if (id) ids.push(id);
    }
    batch = [];
  };
  for (const m of aside) {
    let st: fs.BigIntStats;
    try {
      st = fs.lstatSync(atPath(baseFd, m[2]), { bigint: true });
    } catch {
      continue;
    }
    batch.push({ was: m[1], aside: m[2], st });
    if (batch.length === RECORD_ITEMS) flush();
  }
  if (batch.length > 0) flush();
  return ids;
}

/** Into the record the op began: each entry still in old/ into its slot, then the record is held. */
function keepInRecord(ctx: OpContext, baseFd: number, header: Readonly<JournalHeader>, id: string, aside: Iterable<Move>): string[] {
  const intake = resumeIntake(ctx, id);
  if (!intake) return [];
  let sealed: string | undefined;
  try {
    for (const m of aside) {
      const slot = asideSlot(m[2], header.work);
      if (slot === null || !intake.lists(slot)) continue;
      try {
        // Only the entry the record lists goes into its slot (by identity); anything else stays.
        if (idText(identityOf(fs.lstatSync(atPath(baseFd, m[2]), { bigint: true }))) !== intake.idOf(slot)) continue;
        intake.move(slot, atPath(baseFd, m[2]));
      } catch {
        // Left in old/: removed with the working folder, as without a trash.
      }
    }
  } finally {
    sealed = intake.seal();
  }
  return sealed ? [sealed] : [];
}

/**
 * What an extraction with `overwrite` replaced: the placement journal moved each replaced entry
 * aside into its working folder (`old/<n>`) so a failure could put it back. Once the placement is
 * committed, and before that folder is removed, those entries go into the undo trash instead of
 * away, under records of at most RECORD_ITEMS items (one extraction replacing more makes several).
 *
 * A stop part way is safe either way round: an entry is in `old/` or in its slot, and the next Job
 * finishes the committed journal (which calls this again for what is still in `old/`) and settles
 * the half-filled record (recover.ts).
 * @module
 */
import fs from 'node:fs';
import type { JournalHeader, Move } from '../journal/journal.ts';
import { atPath } from '../root.ts';
import type { OpContext } from '../types.ts';
import { startIntake, type Incoming } from './store.ts';

export const RECORD_ITEMS = 10_000;

export function keepReplaced(ctx: OpContext, baseFd: number, header: Readonly<JournalHeader>, aside: Iterable<Move>): void {
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
      intake.seal();
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
}

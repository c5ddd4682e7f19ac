/**
 * The trash's own ops: trash-list (read-only: a page of held records, newest first, and the bytes
 * held), trash-restore and trash-purge (mutations: the Job holds the world). They work on what the
 * trash holds whatever FELIS_TRASH says: turning it off stops new records, not access to old ones.
 * @module
 */

import fs from 'node:fs';
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { restoreRecord } from '../../../job/trash/restore.ts';
import { Trash } from '../../../job/trash/store.ts';
import { fail } from '../../../job/volume/failure.ts';
import type { Result, TrashItem } from '../../../lib/protocol/result.ts';

/** A page of trash-list, as listings page: the default and the most one page holds. */
export const DEFAULT_TRASH_PAGE = 1000;
export const MAX_TRASH_PAGE = 5000;

function notFound(id: string): Result {
  return fail('trash_not_found', `the trash holds nothing by the id ${id}`);
}

export function trashList(ctx: OpContext, req: OpRequestOf<'trash-list'>): Result {
  const trash = Trash.open(ctx, false);
  if (!trash) return {};
  try {
    const limit = Math.min(req.limit ?? DEFAULT_TRASH_PAGE, MAX_TRASH_PAGE);
    const items: TrashItem[] = [];
    let next: string | undefined;
    let bytes = 0;
    for (const r of trash.held()) {
      const v = trash.view(r);
      bytes += v.bytes;
      if (req.after !== undefined && r.id >= req.after) continue;
      if (items.length < limit) items.push(v);
      else next ??= items[items.length - 1]!.id;
    }
    return { trash_items: items, trash_bytes: bytes, ...(next ? { trash_next: next } : {}) };
  } finally {
    trash.close();
  }
}

export function trashRestore(ctx: OpContext, req: OpRequestOf<'trash-restore'>): Result {
  const id = req.trashId ?? '';
  const trash = Trash.open(ctx, false);
  if (!trash) return notFound(id);
  try {
    const r = trash.read(id);
    if (!r) return notFound(id);
    try {
      if (r.record.state !== 'held') return notFound(id);
      return restoreRecord(ctx, trash, r.fd, r.record, req.to);
    } finally {
      fs.closeSync(r.fd);
    }
  } finally {
    trash.close();
  }
}

export function trashPurge(ctx: OpContext, req: OpRequestOf<'trash-purge'>): Result {
  const trash = Trash.open(ctx, false);
  if (!trash) return req.all ? {} : notFound(req.trashId ?? '');
  try {
    const ids = req.all ? trash.ids() : [req.trashId ?? ''];
    let purged = 0;
    let bytes = 0;
    for (const id of ids) {
      const b = trash.purge(id);
      if (b === null) {
        if (!req.all) return notFound(id);
        continue;
      }
      purged++;
      bytes += b;
    }
    return { purged, bytes, ...(req.all ? {} : { trash_id: req.trashId }) };
  } finally {
    trash.close();
  }
}

export const runs = { 'trash-list': trashList, 'trash-restore': trashRestore, 'trash-purge': trashPurge };

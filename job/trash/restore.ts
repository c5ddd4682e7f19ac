/**
 * trash-restore(id, to?): puts every item of a record back where it was (or at `<to>/<its path>`),
 * all or nothing, never over an existing path (`exists`, naming it), then removes the record.
 * Missing folders on the way are made. Like a move, it never takes a relative link further above
 * the world's root than it reached where it was (moved-links.ts): a restore lands as deep or
 * deeper, unless a folder of its destination is now a link to a shallower one.
 *
 * The record says `restoring` (with each destination and the folders the restore will make)
 * durably before anything moves; each item then goes back in one rename from its slot. A failure
 * part way moves back what had gone, here or, after a stop, in the next Job (recover.ts). A restore
 * replaces nothing, so undoing it is deleting what it put back, which the trash keeps again.
 *
 * @module
 */
import fs from 'node:fs';
import { pathLimitFault } from '../../lib/protocol/names.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { depthOf, judgeMovedLinks, LinkBudget, realFolder } from '../runtime/moved-links.ts';
import { placeholderRefused } from '../runtime/redacted-values.ts';
import { GAME_GID, GAME_UID, type OpContext } from '../runtime/types.ts';
import { rememberContents } from '../runtime/withheld.ts';
import { pathHasWorkingName, reservedMessage } from '../runtime/working-files.ts';
import { bestEffort, fail, msg } from '../volume/failure.ts';
import { PROPERTIES_PATH } from '../volume/guard.ts';
import { clean, dir, join } from '../volume/pathutil.ts';
import { atPath, plainMessage } from '../volume/root.ts';
import { countTree, type Guard, judgeOf } from './count.ts';
import { type TrashRecord, writeRecord } from './record.ts';
import { entryAt, removeMade } from './recover.ts';
import type { Trash } from './store.ts';

function depth(p: string): number {
  return p.split('/').length;
}

function parentsOf(p: string): string[] {
  const parts = p.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}

/** What must exist, and what must be made, for every destination; or the refusal. */
function plan(ctx: OpContext, r: TrashRecord, dest: string[], order: number[]): { made: string[] } | Result {
  const made: string[] = [];
  const coming = new Map<string, 'dir' | 'other'>();
  for (const k of order) {
    const d = dest[k]!;
    // Only the limits: what is put back had its name on the volume already, whatever characters it holds.
    const tooLong = pathLimitFault(d);
    if (tooLong) return fail('bad_path', `${d}: the path ${tooLong}`);
    for (const p of parentsOf(d)) {
      if (made.includes(p)) continue;
      const c = coming.get(p);
      if (c === 'dir') continue;
      if (c === 'other') return { ...fail('exists', `${p} would be put back as a file where ${d} needs a folder`), entry: p };
      let st: fs.BigIntStats | null;
      try {
        st = ctx.root.stat(p);
      } catch {
        st = null;
      }
      if (st === null) {
        // Missing (or a dangling link, which mkdir refuses below): made by the restore.
        const at = entryAt(ctx, p);
        const there = at?.st ?? null;
        at?.parent.close();
        if (there) return { ...fail('exists', `${p} is in the way of ${d}: it is not a folder`), entry: p };
        made.push(p);
      } else if (!st.isDirectory()) {
        return { ...fail('exists', `${p} is in the way of ${d}: it is not a folder`), entry: p };
      }
    }
    const at = entryAt(ctx, d);
    const taken = at !== null && at.st !== null;
    at?.parent.close();
    if (taken || made.includes(d) || coming.has(d)) return { ...fail('exists', msg.exists(d)), entry: d };
    coming.set(d, r.items[k]!.kind === 'dir' ? 'dir' : 'other');
  }
  return { made };
}

function guardMessage(path: string, guard: Guard): string {
  return guard === 'secret' ? `${path} held the proxy forwarding secret when it went to the trash` : `${path} was the server's ${PROPERTIES_PATH}, with its RCON password, when it went to the trash`;
}

/**
 * The guarded-file rule of a restore (docs/withheld-file.md): an item that held the withheld file
 * or one of its contents, or was the root server.properties, goes back only where it was (no `to`),
 * and a server.properties only where the root's name leads now; what goes where the root
 * server.properties is must hold no redacted placeholder (nothing on disk gives it a value). Then
 * the withheld contents are remembered in the ledger before anything moves, so they stay withheld
 * wherever they land. Null when the restore may go on.
 */
function keepGuarded(ctx: OpContext, fd: number, r: TrashRecord, dest: string[], under: boolean): Result | null {
  // A record sealed before items were judged is judged now, by what the world knows today.
  const judge = r.judged ? null : judgeOf(ctx, false);
  const items = r.items.map((i) => {
    if (!judge) return i;
    const c = countTree(fd, String(i.slot), judge);
    const guard = c.guard ?? i.guard;
    return { ...i, ...(guard ? { guard } : {}), withheld: [...(i.withheld ?? []), ...c.withheld] };
  });
  const landing = ctx.root.landingPath(PROPERTIES_PATH);
  const covers = (d: string) => landing !== null && (landing === d || landing.startsWith(`${d}/`));
  for (const [k, i] of items.entries()) {
    if (i.guard && under) return fail('bad_path', `${guardMessage(i.path, i.guard)}; it goes back only where it was: restore it without "to"`);
    if (i.guard === 'properties' && !covers(dest[k]!)) {
      return fail('bad_path', `${guardMessage(i.path, i.guard)}; it goes back only where ${PROPERTIES_PATH} leads (${landing ?? 'nowhere in the world'})`);
    }
    if (covers(dest[k]!)) {
      const sub = landing!.slice(dest[k]!.length + 1);
      const refused = placeholderRefused(ctx.root, landing!, atPath(fd, sub ? `${i.slot}/${sub}` : String(i.slot)));
      if (refused) return refused;
    }
  }
  try {
    rememberContents(
      ctx.root,
      items.flatMap((i) => (i.guard === 'secret' ? (i.withheld ?? []) : [])),
    );
  } catch (e) {
    return fail('bad_path', `the withheld contents of ${r.id} could not be recorded before it is put back (${plainMessage(e, r.id)}); nothing was restored`);
  }
  return null;
}

/** The path `p` will have as the kernel names it: its deepest existing folder's, then the folders the restore makes. */
function realPathOf(ctx: OpContext, p: string): string {
  if (p === '.' || p === '') return '';
  let fd: number;
  try {
    fd = ctx.root.openDir(p);
  } catch {
    const up = realPathOf(ctx, dir(p));
    const base = p.slice(p.lastIndexOf('/') + 1);
    return up === '' ? base : `${up}/${base}`;
  }
  try {
    return realFolder(ctx.root, fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Null when no item takes a link further out than where it was (see the module note), else the refusal. */
function judgeLinks(ctx: OpContext, fd: number, r: TrashRecord, dest: string[]): Result | null {
  const budget = new LinkBudget();
  for (const [k, item] of r.items.entries()) {
    if (item.kind !== 'dir' && item.kind !== 'link') continue;
    const d = dest[k]!;
    const folder = realPathOf(ctx, dir(d));
    const base = d.slice(d.lastIndexOf('/') + 1);
    const refused = judgeMovedLinks(
      {
        dirFd: fd,
        name: String(item.slot),
        fromDepth: depthOf(dir(item.path)),
        lands: folder === '' ? base : `${folder}/${base}`,
        shownAfter: d,
        unchanged: `nothing of ${r.id} was restored`,
      },
      budget,
    );
    if (refused) return { ...refused, entry: d };
  }
  return null;
}

class RestoreFailed extends Error {
  readonly result: Result;
  constructor(result: Result) {
    super(result.error);
    this.result = result;
  }
}

export function restoreRecord(ctx: OpContext, trash: Trash, fd: number, r: TrashRecord, to: string | undefined): Result {
  let base = '';
  if (to !== undefined && to !== '') {
    base = clean(to);
    if (base === '.') base = '';
    else if (base.startsWith('../') || base === '..' || base.startsWith('/')) return fail('bad_path', `${to}: the folder to restore under is outside the world`);
    else if (pathHasWorkingName(base)) return fail('bad_path', reservedMessage(base));
  }
  const dest = r.items.map((i) => (base ? join(base, i.path) : i.path));
  // Folders before what goes in them.
  const order = r.items.map((_, k) => k).sort((a, b) => depth(dest[a]!) - depth(dest[b]!) || a - b);
  const planned = plan(ctx, r, dest, order);
  if (!('made' in planned)) return planned;
  const links = judgeLinks(ctx, fd, r, dest);
  if (links) return links;
  // Last: it writes the ledger, which only a restore that goes ahead needs.
  const guarded = keepGuarded(ctx, fd, r, dest, base !== '');
  if (guarded) return guarded;
  const restoring: TrashRecord = { ...r, state: 'restoring', dest, made: planned.made };
  writeRecord(fd, restoring, ctx.fsync);
  ctx.journalStep?.('trash:restoring');
  const back: number[] = [];
  try {
    for (const p of planned.made) {
      const at = entryAt(ctx, p);
      if (!at) throw new RestoreFailed(fail('not_found', msg.folderMissing(p)));
      try {
        if (at.st) throw new RestoreFailed({ ...fail('exists', msg.exists(p)), entry: p });
        fs.mkdirSync(at.parent.at(), 0o755);
        bestEffort(() => ctx.chown(at.parent.at(), GAME_UID, GAME_GID));
      } finally {
        at.parent.close();
      }
    }
    for (const k of order) {
      const at = entryAt(ctx, dest[k]!);
      if (!at) throw new RestoreFailed(fail('not_found', msg.notExist(dest[k]!)));
      try {
        if (at.st) throw new RestoreFailed({ ...fail('exists', msg.exists(dest[k]!)), entry: dest[k] });
        ctx.rename(atPath(fd, String(r.items[k]!.slot)), at.parent.at());
        back.push(k);
        ctx.journalStep?.(`trash:back:${back.length}`);
        bestEffort(() => ctx.fsync(at.parent.fd));
      } finally {
        at.parent.close();
      }
    }
  } catch (e) {
    rollBack(ctx, fd, restoring, back);
    if (e instanceof RestoreFailed) return e.result;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT') return fail('no_space', `the server's volume is full; nothing of ${r.id} was restored`);
    return fail('bad_path', `${r.id} could not be restored (${plainMessage(e, r.id)}); nothing was changed`);
  }
  bestEffort(() => ctx.syncfs(ctx.root.dir));
  trash.forget(r.id);
  return { restored: dest, trash_id: r.id };
}

/** Moves back into their slots the items already restored, removes the folders made, holds the record again. */
function rollBack(ctx: OpContext, fd: number, r: TrashRecord, back: number[]): void {
  let stuck = false;
  for (const k of [...back].reverse()) {
    try {
      const at = entryAt(ctx, r.dest![k]!);
      if (!at) throw new Error('gone');
      try {
        ctx.rename(at.parent.at(), atPath(fd, String(r.items[k]!.slot)));
      } finally {
        at.parent.close();
      }
    } catch {
      stuck = true;
    }
  }
  // Still restoring: the next Job's recovery moves back what this one could not (recover.ts).
  if (stuck) return;
  removeMade(ctx, r.made ?? []);
  const { dest: _d, made: _m, ...held } = r;
  writeRecord(fd, { ...held, state: 'held' }, ctx.fsync);
}

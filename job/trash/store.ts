/**
 * The undo trash: what an op removes or replaces is moved (one rename on the same volume, never a
 * copy) into `.felis-edit-undo/<id>/<index>` at the world root, under one record per op
 * (record.ts). See docs/undo.md for the whole design; the rules this module keeps:
 *
 * - **Never gone, never twice.** The record (state `moving`, every item listed) is durable before the
 *   first item moves, and an item is in the trash exactly when its slot exists, so a stop at any
 *   point leaves each path where it was or in the trash with its record. A replaced file is
 *   hard-linked into its slot before the new content is renamed over it, so the replace stays one
 *   atomic step; recovery drops a slot whose entry is still at its path (the replace never
 *   happened) and puts a replaced item back where its name is still free.
 * - **Ours only.** The folder is made 0700 by the Job's user and is used only when it still is
 *   that; a record is read only from a file of ours (record.ts). Nothing here follows a link.
 * - **Purging is one rename first**: `<id>` becomes `.purge-<id>` (out of every listing at once),
 *   then it is removed; what a stop leaves of it goes with the next mutation.
 *
 * @module
 */
import fs from 'node:fs';
import type { TrashItem } from '../../lib/protocol/result.ts';
import { TRASH_ID } from '../../lib/protocol/trash-env.ts';
import { UNDO_DIR } from '../../lib/protocol/working-names.ts';
import type { OpContext } from '../runtime/types.ts';
import { withheldRule } from '../runtime/withheld.ts';
import { bestEffort } from '../volume/failure.ts';
import { PROPERTIES_PATH, SECRET_PATH } from '../volume/guard.ts';
import { removeAllAt } from '../volume/remove-all.ts';
import { atPath, errCode, existsAt, fdPath, type Identity, identityOf, isNotExist } from '../volume/root.ts';
import { countTree, type Guard, judgeOf } from './count.ts';
import { idTime, newId, type RecordItem, readRecord, type TrashRecord, writeRecord } from './record.ts';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;
const PURGE_PREFIX = '.purge-';
/**
 * How long one Job spends removing expired or purged records beyond what it needs for room: what
 * a delete postponed (unlinking a big tree) is paid a slice at a time, never by one op all at once.
 */
export const PURGE_BUDGET_MS = 1000;

/**
 * Removes `name` in `dirFd` as removeAllAt does (never following a link), stopping once
 * `deadline` (performance.now) has passed. True when it is gone.
 */
export function removeWithin(dirFd: number, name: string | Buffer, deadline: number): boolean {
  try {
    fs.unlinkSync(atPath(dirFd, name));
    return true;
  } catch (e) {
    const code = errCode(e);
    if (code === 'ENOENT') return true;
    if (code !== 'EISDIR' && code !== 'EPERM') throw e;
  }
  let fd: number;
  try {
    fd = openDirNoFollow(atPath(dirFd, name));
  } catch (e) {
    if (isNotExist(e)) return true;
    if (errCode(e) === 'ENOTDIR' || errCode(e) === 'ELOOP') {
      fs.unlinkSync(atPath(dirFd, name));
      return true;
    }
    throw e;
  }
  try {
    for (;;) {
      const names = fs.readdirSync(fdPath(fd), { encoding: 'buffer' });
      if (names.length === 0) break;
      for (const n of names) {
        if (performance.now() > deadline) return false;
        if (!removeWithin(fd, n, deadline)) return false;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  fs.rmdirSync(atPath(dirFd, name));
  return true;
}

/** `<dev>:<ino>`. */
export function idText(id: Identity): string {
  return `${id.dev}:${id.ino}`;
}

function kindOf(st: fs.BigIntStats): RecordItem['kind'] {
  return st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'link' : st.isFile() ? 'file' : 'other';
}

/** The trash folder as we make it: a folder, 0700, this program's user's. */
function isOurs(st: fs.Stats): boolean {
  return st.isDirectory() && (st.mode & 0o777) === 0o700 && st.uid === (process.geteuid?.() ?? st.uid);
}

function openDirNoFollow(p: string | Buffer): number {
  return fs.openSync(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

/** An entry about to go into the trash: its root-relative path (without links) and its lstat. */
export interface Incoming {
  path: string;
  st: fs.BigIntStats;
}

/**
 * The trash of one world, open for one Job. `Trash.open` answers null when the trash is off or its
 * folder is not ours (then an op deletes and replaces for good, as without it).
 */
export class Trash {
  readonly #ctx: OpContext;
  readonly #fd: number;

  private constructor(ctx: OpContext, fd: number) {
    this.#ctx = ctx;
    this.#fd = fd;
  }

  /** The folder's fd: the caller does not close it (`close` does). */
  get fd(): number {
    return this.#fd;
  }

  /**
   * Opens the trash, making its folder when `make` (an op about to put something in) and it is
   * missing; an op that would put something in finds it closed when the trash is off.
   */
  static open(ctx: OpContext, make: boolean): Trash | null {
    if (make && !ctx.trash.enabled) return null;
    const p = atPath(ctx.root.fd, UNDO_DIR);
    for (let attempt = 0; attempt < 2; attempt++) {
      let fd: number;
      try {
        fd = openDirNoFollow(p);
      } catch (e) {
        if (!isNotExist(e) || !make) return null;
        try {
          fs.mkdirSync(p, 0o700);
          fs.chmodSync(p, 0o700); // the umask may have narrowed it; ours is exactly 0700
          bestEffort(() => ctx.fsync(ctx.root.fd));
        } catch (e2) {
          if (errCode(e2) !== 'EEXIST') return null;
        }
        continue;
      }
      if (!isOurs(fs.fstatSync(fd))) {
        fs.closeSync(fd);
        return null;
      }
      return new Trash(ctx, fd);
    }
    return null;
  }

  close(): void {
    bestEffort(() => fs.closeSync(this.#fd));
  }

  /** The record ids, newest first. */
  ids(): string[] {
    const out: string[] = [];
    for (const n of fs.readdirSync(fdPath(this.#fd))) if (TRASH_ID.test(n)) out.push(n);
    return out.sort().reverse();
  }

  #openRecord(id: string): number | null {
    try {
      return openDirNoFollow(atPath(this.#fd, id));
    } catch (e) {
      if (isNotExist(e) || errCode(e) === 'ENOTDIR' || errCode(e) === 'ELOOP') return null;
      throw e;
    }
  }

  /** A record and its open folder, or null when there is no record of ours by that id. Close the fd. */
  read(id: string): { fd: number; record: TrashRecord } | null {
    if (!TRASH_ID.test(id)) return null;
    const fd = this.#openRecord(id);
    if (fd === null) return null;
    const record = readRecord(fd, id);
    if (!record) {
      fs.closeSync(fd);
      return null;
    }
    return { fd, record };
  }

  /** What a listing shows of a held record. */
  view(r: TrashRecord): TrashItem {
    const expires = r.at + this.#ctx.trash.seconds * 1000;
    return {
      id: r.id,
      op: r.op,
      paths: r.items.map((i) => i.path),
      bytes: r.items.reduce((s, i) => s + shownBytes(r, i), 0),
      entries: r.items.reduce((s, i) => s + i.entries, 0),
      at: new Date(r.at).toISOString(),
      expires_at: new Date(expires).toISOString(),
      actor: r.actor,
    };
  }

  /** Every held record, newest first (one record in memory at a time besides the views). */
  *held(): Generator<TrashRecord> {
    for (const id of this.ids()) {
      const r = this.read(id);
      if (!r) continue;
      fs.closeSync(r.fd);
      if (r.record.state === 'held') yield r.record;
    }
  }

  /** Bytes the held records hold, as listings show them (a guarded file's are not counted). */
  heldBytes(): number {
    let n = 0;
    for (const r of this.held()) for (const i of r.items) n += shownBytes(r, i);
    return n;
  }

  /**
   * Writes down a new record (state `moving`) for the entries about to go in, durably, before any
   * of them moves. `replace`: the op puts new content at their names (see TrashRecord).
   */
  begin(op: string, replace: boolean, items: Incoming[]): Intake {
    // The withheld rule as it is before anything moves: the slots are judged by it when sealed.
    withheldRule(this.#ctx.root);
    const guards = placeGuards(this.#ctx);
    for (;;) {
      const id = newId(this.#ctx.now(), this.#ctx.randomBytes);
      try {
        fs.mkdirSync(atPath(this.#fd, id), 0o700);
      } catch (e) {
        if (errCode(e) === 'EEXIST') continue;
        throw e;
      }
      const fd = openDirNoFollow(atPath(this.#fd, id));
      const record: TrashRecord = {
        v: 1,
        id,
        op,
        actor: this.#ctx.trash.actor,
        at: this.#ctx.now(),
        state: 'moving',
        replace,
        items: items.map((i, slot) => {
          const guard = guards(i.path);
          return { path: i.path, kind: kindOf(i.st), id: idText(identityOf(i.st)), bytes: 0, entries: 0, slot, ...(guard ? { guard } : {}) };
        }),
      };
      try {
        writeRecord(fd, record, this.#ctx.fsync);
        bestEffort(() => this.#ctx.fsync(this.#fd));
      } catch (e) {
        fs.closeSync(fd);
        bestEffort(() => removeAllAt(this.#fd, id));
        throw e;
      }
      this.#ctx.journalStep?.('trash:record');
      return new Intake(this, this.#ctx, fd, record);
    }
  }

  /**
   * Removes a record and all it holds for good; its bytes, or null when there is none. `whole`: all
   * of it now (an op needs the room); otherwise within this Job's removal budget, the rest left
   * under `.purge-<id>` for the next mutation (an expiry or a purge never makes an op slow).
   */
  purge(id: string, whole = false): number | null {
    const r = this.read(id);
    if (!r) return null;
    fs.closeSync(r.fd);
    const bytes = r.record.items.reduce((s, i) => s + shownBytes(r.record, i), 0);
    this.#drop(id, whole);
    return bytes;
  }

  /** One rename takes the record out of every listing; then what it holds is removed. */
  #drop(id: string, whole: boolean): void {
    const aside = PURGE_PREFIX + id;
    this.#ctx.rename(atPath(this.#fd, id), atPath(this.#fd, aside));
    bestEffort(() => this.#ctx.fsync(this.#fd));
    this.#ctx.journalStep?.('trash:purge-aside');
    if (whole) removeAllAt(this.#fd, aside);
    else removeWithin(this.#fd, aside, this.#budgetEnd());
  }

  #deadline: number | undefined;
  /** The end of this Job's removal budget, from the first time it is asked for. */
  #budgetEnd(): number {
    this.#deadline ??= performance.now() + PURGE_BUDGET_MS;
    return this.#deadline;
  }

  /** Removes (within the budget) what purges before this one left, a stop or a budget's end. */
  sweepPurged(): void {
    for (const n of fs.readdirSync(fdPath(this.#fd))) {
      if (n.startsWith(PURGE_PREFIX) && TRASH_ID.test(n.slice(PURGE_PREFIX.length))) bestEffort(() => removeWithin(this.#fd, n, this.#budgetEnd()));
    }
  }

  /** Purges the records older than the trash's time, by their ids alone. Returns how many went. */
  expire(): number {
    const cutoff = this.#ctx.now() - this.#ctx.trash.seconds * 1000;
    let n = 0;
    for (const id of this.ids()) {
      if (idTime(id) > cutoff) continue;
      // Only a record of ours is removed: a folder of the right name but not ours stays.
      if (this.read(id) === null) continue;
      bestEffort(() => {
        if (this.purge(id) !== null) n++;
      });
    }
    return n;
  }

  /**
   * Purges records oldest first until `free()` reports at least `need` bytes, and only when it can
   * get there: when what is free and all the trash holds (`heldBytes`) are less than `need`, or the
   * trash cannot be read, nothing is purged (a request that can never fit costs the trash nothing).
   * Returns what `free()` reports last.
   */
  makeRoom(need: number, free: () => number | undefined): number | undefined {
    let avail = free();
    if (avail === undefined || avail >= need) return avail;
    let held: number;
    try {
      held = this.heldBytes();
    } catch {
      return avail;
    }
    if (avail + held < need) return avail;
    for (const id of this.ids().reverse()) {
      if (this.purge(id, true) !== null) avail = free();
      if (avail === undefined || avail >= need) break;
    }
    return avail;
  }

  /** Folder of a record for Intake/restore. */
  recordFd(id: string): number | null {
    return this.#openRecord(id);
  }

  /** Removes a record whose items have all left it (restored, or none went in). */
  forget(id: string): void {
    this.#drop(id, true);
  }
}

/**
 * One op's record while its entries go in. Every entry listed at `begin` is moved (`move`) or
 * linked (`link`) into its slot, or given up (`skip`); `seal` counts what is held and marks the
 * record `held`, or removes it when nothing went in.
 */
export class Intake {
  readonly #trash: Trash;
  readonly #ctx: OpContext;
  readonly #fd: number;
  readonly #record: TrashRecord;
  readonly #in = new Set<number>();
  #onDone: () => void = () => {};

  /** `already`: the slots that hold their entry already (a record begun by an earlier step or Job). */
  constructor(trash: Trash, ctx: OpContext, fd: number, record: TrashRecord, already: Iterable<number> = []) {
    this.#trash = trash;
    this.#ctx = ctx;
    this.#fd = fd;
    this.#record = record;
    for (const i of already) this.#in.add(i);
  }

  /** Called once the record is sealed (the opener closes the trash there). */
  onDone(f: () => void): void {
    this.#onDone = f;
  }

  get id(): string {
    return this.#record.id;
  }

  /** Whether the record lists an item with slot `i`. */
  lists(i: number): boolean {
    return this.#record.items.some((item) => item.slot === i);
  }

  /** The `<dev>:<ino>` the record lists for slot `i`. */
  idOf(i: number): string | undefined {
    return this.#record.items.find((item) => item.slot === i)?.id;
  }

  #slot(i: number): string {
    return atPath(this.#fd, String(i));
  }

  /** Moves entry `i` (at `from`, a /proc path) into its slot: one rename. Throws what rename throws. */
  move(i: number, from: string): void {
    this.#ctx.rename(from, this.#slot(i));
    this.#in.add(i);
    this.#ctx.journalStep?.(`trash:in:${i}`);
  }

  /** Links entry `i` (a regular file at `from`) into its slot, leaving it where it is. */
  link(i: number, from: string): void {
    fs.linkSync(from, this.#slot(i));
    this.#in.add(i);
    this.#ctx.journalStep?.(`trash:linked:${i}`);
  }

  /** Takes entry `i` back out of its slot (a link made for a replace that did not happen). */
  unlink(i: number): void {
    if (!this.#in.has(i)) return;
    fs.unlinkSync(this.#slot(i));
    this.#in.delete(i);
  }

  /** Moves entry `i` back from its slot to `to` (a replace that did not happen after a move aside). */
  putBack(i: number, to: string): void {
    if (!this.#in.has(i)) return;
    this.#ctx.rename(this.#slot(i), to);
    this.#in.delete(i);
  }

  /**
   * Leaves the record `moving` and closes it: its entries go in later, by whoever resumes it
   * (`resumeIntake`) or, after a stop, by the Job that recovers the world.
   */
  release(): void {
    bestEffort(() => fs.closeSync(this.#fd));
    this.#onDone();
  }

  /**
   * Marks the record held with what went in (sizes counted), or removes it when nothing did.
   * Returns the record's id, or undefined when nothing is kept. Closes the record.
   */
  seal(): string | undefined {
    try {
      return sealRecord(this.#trash, this.#ctx, this.#fd, this.#record, (i) => this.#in.has(i));
    } finally {
      bestEffort(() => fs.closeSync(this.#fd));
      this.#onDone();
    }
  }
}

/**
 * Opens the trash and begins a record for `items`: null when the trash is off, not ours, or its
 * record cannot be written (a full volume): the op then removes or replaces for good, as without
 * a trash. The trash never makes an op fail.
 */
export function startIntake(ctx: OpContext, op: string, replace: boolean, items: Incoming[]): Intake | null {
  if (items.length === 0) return null;
  const trash = Trash.open(ctx, true);
  if (!trash) return null;
  let intake: Intake;
  try {
    intake = trash.begin(op, replace, items);
  } catch {
    trash.close();
    return null;
  }
  intake.onDone(() => trash.close());
  return intake;
}

/**
 * Writes down a record (state `moving`) for `items` and leaves it for its entries to go in later
 * (`resumeIntake`): its id, or undefined when there is no trash to keep them (as `startIntake`).
 */
export function beginRecord(ctx: OpContext, op: string, replace: boolean, items: Incoming[]): string | undefined {
  const intake = startIntake(ctx, op, replace, items);
  if (!intake) return undefined;
  intake.release();
  return intake.id;
}

/**
 * The record `id` begun by `beginRecord`, open for its entries to go in: null when there is no such
 * record of ours, or it is no longer `moving` (sealed already). Works whatever FELIS_TRASH says
 * now: the record was begun while it was on.
 */
export function resumeIntake(ctx: OpContext, id: string): Intake | null {
  const trash = Trash.open(ctx, false);
  if (!trash) return null;
  const r = trash.read(id);
  if (r?.record.state !== 'moving') {
    if (r) fs.closeSync(r.fd);
    trash.close();
    return null;
  }
  const already = r.record.items.filter((i) => existsAt(r.fd, String(i.slot))).map((i) => i.slot);
  const intake = new Intake(trash, ctx, r.fd, r.record, already);
  intake.onDone(() => trash.close());
  return intake;
}

/**
 * Marks `record` held with the items for which `kept(slot)` holds, their sizes counted; each keeps
 * its slot (nothing is renamed, so a stop here leaves the record `moving` with its slots as they were).
 */
export function sealRecord(trash: Trash, ctx: OpContext, fd: number, record: TrashRecord, kept: (i: number) => boolean): string | undefined {
  bestEffort(() => ctx.fsync(fd)); // the slots' names are durable before the record says held
  const items: RecordItem[] = [];
  const judge = judgeOf(ctx);
  for (const item of record.items) {
    if (!kept(item.slot)) continue;
    const c = countTree(fd, String(item.slot), judge);
    const guard = c.guard ?? item.guard;
    items.push({ ...item, bytes: c.bytes, entries: c.entries, ...(guard ? { guard } : {}), ...(c.withheld.length > 0 ? { withheld: c.withheld } : {}) });
  }
  if (items.length === 0) {
    bestEffort(() => trash.forget(record.id));
    return undefined;
  }
  writeRecord(fd, { ...record, state: 'held', items, judged: true }, ctx.fsync);
  ctx.journalStep?.('trash:held');
  return record.id;
}

/**
 * The guard an entry takes by where it was: it is, or is a folder holding, the place
 * `config/paper-global.yml` or the root `server.properties` leads to when the op begins. A file
 * that was one of them counts this way even once its name holds new content (a write's replace).
 */
function placeGuards(ctx: OpContext): (path: string) => Guard | undefined {
  const places: [string | null, Guard][] = [
    [ctx.root.landingPath(SECRET_PATH), 'secret'],
    [ctx.root.landingPath(PROPERTIES_PATH), 'properties'],
  ];
  return (path) => places.find(([p]) => p !== null && (p === path || p.startsWith(`${path}/`)))?.[1];
}

/**
 * The bytes a listing shows of an item: none for a guarded file (listings show a withheld file as 0
 * bytes; a folder's count already leaves its withheld files out). A record sealed before items were
 * judged is judged by the item's name alone.
 */
function shownBytes(r: TrashRecord, i: RecordItem): number {
  const guarded = i.guard !== undefined || (!r.judged && (i.path === SECRET_PATH || i.path === PROPERTIES_PATH));
  return guarded && i.kind === 'file' ? 0 : i.bytes;
}

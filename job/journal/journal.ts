/**
 * A placement journal: how an op that places more than one path finishes or undoes it, whatever
 * stops the Job. The op stages everything in a working folder of its base folder (`<base>/<work>`),
 * then moves it into place by renames. The journal lives in a folder of its own at the world root,
 * `<root>/.felis-unzip-<12 hex>/` (a working name: hidden and never addressable), so the next Job
 * that mounts the world read-write finds it without walking the world:
 *
 * - `journal.json`: the op, the base folder (root-relative, without links, and its identity), the
 *   working folder's name, the number of move segments, and the state;
 * - `moves-<k>.json`: the moves, in order, at most SEGMENT_MOVES (or SEGMENT_CHARS of names) a file.
 *
 * States: `staging` (nothing moved yet: undo = remove the working folder) → `placing` (every byte
 * is staged and every move is written down: roll forward) → `committed`; or, when a move fails,
 * `placing` → `undoing` → `undone`. `committed` and `undone` only remove the working folder and
 * then the journal.
 *
 * Each move is idempotent to redo and to undo, because whether it has happened is read from a name
 * only that move touches:
 * - `in` moves a staged entry into the world: it has happened iff its source is gone;
 * - `aside` moves an existing entry into the working folder (a replaced file, or a many-file
 *   delete's item, so undo can put it back): it has happened iff its target exists;
 * - `move` moves an entry from one place in the world to another (a many-file move, whose checks
 *   make every source a distinct entry outside every other move and every target a name that was
 *   free): it has happened iff its source is gone.
 *
 * Durability, and what it relies on: each journal file is written under a temporary name, fsynced
 * and renamed; the journal folder is fsynced after each rename, and the root after the folder is
 * made. The staged tree is durable before the state becomes `placing` (the caller syncs it); the
 * moves are made durable (one syncfs of the volume, or an fsync of every folder they touched)
 * before the state becomes `committed` or `undone`; nothing is removed before that state is
 * durable. Between those points no ordering of renames is assumed except that a rename which
 * needs an earlier one (a replacement's `in` needs its `aside` to have freed the name) never
 * survives a crash without it, as on any journaling filesystem (ext4, xfs): one rename is atomic.
 *
 * Every path is relative to the base folder's fd. The world is held by this Job alone (the world
 * lock), and the paths name folders the op saw to be real folders; a journal read back is checked
 * for every path rule before anything is done with it.
 *
 * @module
 */

import fs from 'node:fs';
import { OP_ID } from '../../lib/protocol/recovered.ts';
import { TRASH_ID } from '../../lib/protocol/trash-env.ts';
import { atPath, canonicalRel, errCode, fdPath, isNotExist } from '../volume/root.ts';
import { isWorkFolderName, WORK_PREFIX } from '../volume/work-folder.ts';

/** Moves a segment holds at most, and characters of their paths: each segment is one write and one fsync. */
export const SEGMENT_MOVES = 8192;
const SEGMENT_CHARS = 1 << 20;
export const JOURNAL_FILE = 'journal.json';

export type MoveKind = 'in' | 'aside' | 'move';
/** A move, relative to the base folder: [kind, from, to]. */
export type Move = [kind: MoveKind, from: string, to: string];
export type JournalState = 'staging' | 'placing' | 'committed' | 'undoing' | 'undone';

export interface JournalHeader {
  v: 1;
  op: string;
  /** The op's id (its Job's op-id label), when the Job was told it: recovery reports it. */
  id?: string;
  /** The base folder, root-relative ("" for the root), as the kernel names it (no links). */
  base: string;
  /** Its identity, `<dev>:<ino>`: a journal never acts on another folder of the same name. */
  baseId: string;
  /** The working folder's name in the base folder. */
  work: string;
  state: JournalState;
  segments: number;
  moves: number;
  /**
   * The undo-trash record (state `moving`, written before the plan was sealed) that takes what the
   * op moves aside once it is committed, slot `n` for `<work>/old/<n>`: a many-file delete's one
   * record, whoever finishes it. Without it, what is replaced goes into records made at commit.
   */
  trash?: string;
}

/** The system calls a journal uses; tests replace them, and `step` is told of every durable step. */
export interface JournalHooks {
  rename: (from: string, to: string) => void;
  fsync: (fd: number) => void;
  /** One syncfs of the volume holding this path; throwing makes the journal fsync folders instead. */
  syncfs: (path: string) => void;
  /** Test-only: called after every step that leaves something on disk (`state:placing`, `move:3`, ...). */
  step?: (name: string) => void;
  /**
   * Told, before a committed journal's working folder goes, of every entry the op moved aside
   * (what it replaced or deleted, still in `old/`): the undo trash takes them
   * (job/trash/replaced.ts). Returns the ids of the records that hold them.
   */
  keepReplaced?: (baseFd: number, header: Readonly<JournalHeader>, aside: Iterable<Move>) => string[];
}

export class JournalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'JournalError';
  }
}

/** Some moves could not be undone: the journal stays `undoing`, for the next Job to try again. */
export class UndoError extends JournalError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UndoError';
  }
}

function exists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch (e) {
    if (isNotExist(e)) return false;
    throw e;
  }
}

function fsyncPath(p: string, fsync: (fd: number) => void): void {
  const fd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    fsync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function parentOf(rel: string): string {
  const i = rel.lastIndexOf('/');
  return i < 0 ? '' : rel.slice(0, i);
}

/** A path a journal may name: relative, clean components, no `..`, `.`, NUL or empty component. */
function isCleanRel(p: unknown): p is string {
  if (typeof p !== 'string' || p === '' || p.includes('\0') || p.length > 65536) return false;
  return p.split('/').every((c) => c !== '' && c !== '.' && c !== '..');
}

/** The checks a journal read back must pass: otherwise it is not ours and is never acted on. */
export function validHeader(h: unknown): h is JournalHeader {
  const j = h as JournalHeader;
  return (
    typeof j === 'object' &&
    j !== null &&
    j.v === 1 &&
    typeof j.op === 'string' &&
    (j.id === undefined || (typeof j.id === 'string' && OP_ID.test(j.id))) &&
    (j.base === '' || isCleanRel(j.base)) &&
    typeof j.baseId === 'string' &&
    /^\d+:\d+$/.test(j.baseId) &&
    typeof j.work === 'string' &&
    isWorkFolderName(j.work) &&
    ['staging', 'placing', 'committed', 'undoing', 'undone'].includes(j.state) &&
    Number.isSafeInteger(j.segments) &&
    j.segments >= 0 &&
    Number.isSafeInteger(j.moves) &&
    j.moves >= 0 &&
    (j.trash === undefined || (typeof j.trash === 'string' && TRASH_ID.test(j.trash)))
  );
}

/**
 * An `in` move comes from the working folder; an `aside` goes into it; a `move` never touches it;
 * none ever touches it otherwise.
 */
function validMove(m: unknown, work: string): m is Move {
  if (!Array.isArray(m) || m.length !== 3 || !isCleanRel(m[1]) || !isCleanRel(m[2])) return false;
  const inWork = (p: string) => p === work || p.startsWith(`${work}/`);
  // Staged entries come from new/ only; what is moved aside goes to old/<n> only.
  if (m[0] === 'in') return m[1].startsWith(`${work}/new/`) && !inWork(m[2]);
  if (m[0] === 'aside') return asideSlot(m[2], work) !== null && !inWork(m[1]);
  if (m[0] === 'move') return !inWork(m[1]) && !inWork(m[2]);
  return false;
}

/** The `<n>` of an aside's target `<work>/old/<n>`, or null when it is not one. */
export function asideSlot(to: string, work: string): number | null {
  const prefix = `${work}/old/`;
  if (!to.startsWith(prefix) || !/^\d{1,15}$/.test(to.slice(prefix.length))) return null;
  return Number(to.slice(prefix.length));
}

/**
 * A journal file is ours only when this program's user wrote it for itself: a regular file (never a
 * link) owned by the Job's user, writable by nobody else. The game and every file felis-world
 * writes for a caller belong to the game's uid, so neither can forge one.
 */
function ownFile(p: string): boolean {
  const st = fs.lstatSync(p);
  const uid = process.geteuid?.() ?? st.uid;
  return st.isFile() && st.uid === uid && (st.mode & 0o022) === 0;
}

/** `<dev>:<ino>` of an open folder. */
export function folderId(fd: number): string {
  const st = fs.fstatSync(fd, { bigint: true });
  return `${st.dev}:${st.ino}`;
}

export { canonicalRel };

/**
 * One journal, open on its base folder. Made by `Journal.begin` (a new op) or `Journal.load`
 * (recovery). The caller owns `baseFd` and closes it.
 */
export class Journal {
  readonly #rootFd: number;
  readonly #baseFd: number;
  readonly #name: string;
  readonly #hooks: JournalHooks;
  readonly #header: JournalHeader;
  #pending: Move[] = [];
  #pendingChars = 0;
  #failed: Move | undefined;

  private constructor(rootFd: number, baseFd: number, name: string, header: JournalHeader, hooks: JournalHooks) {
    this.#rootFd = rootFd;
    this.#baseFd = baseFd;
    this.#name = name;
    this.#header = header;
    this.#hooks = hooks;
  }

  get state(): JournalState {
    return this.#header.state;
  }
  get header(): Readonly<JournalHeader> {
    return this.#header;
  }
  /** The journal folder's name at the root. */
  get name(): string {
    return this.#name;
  }
  /** The move whose rename failed within this Job (its placement was then undone), if one did. */
  get failedMove(): Move | undefined {
    return this.#failed;
  }

  /**
   * Writes down a new op in state `staging`, durably, before its working folder `work` (not made
   * yet) exists in the base folder `baseFd`: whatever stops the Job from then on, the next Job
   * removes that folder. `hex` is 12 random hex digits for the journal folder's name; `id` is the
   * op's id, if the Job knows it.
   */
  static begin(rootFd: number, baseFd: number, op: string, work: string, hex: string, hooks: JournalHooks, id?: string): Journal {
    const base = canonicalRel(rootFd, baseFd);
    if (base === null) throw new JournalError('the destination folder is not inside the world');
    const name = WORK_PREFIX + hex;
    const header: JournalHeader = { v: 1, op, ...(id !== undefined && OP_ID.test(id) ? { id } : {}), base, baseId: folderId(baseFd), work, state: 'staging', segments: 0, moves: 0 };
    fs.mkdirSync(atPath(rootFd, name), 0o700);
    const j = new Journal(rootFd, baseFd, name, header, hooks);
    try {
      j.#writeFile(JOURNAL_FILE, JSON.stringify(header));
      fsyncPath(fdPath(rootFd), hooks.fsync);
    } catch (e) {
      // Not written down (a full volume): nothing of the op exists yet, so its folder goes too.
      try {
        fs.rmSync(atPath(rootFd, name), { recursive: true, force: true });
      } catch {
        // Left for the next sweep of the root: a folder of ours without a journal in it.
      }
      throw e;
    }
    j.#step('state:staging');
    return j;
  }

  /** Reads the journal in the folder `name` at the root; null when it is not a journal of ours. */
  static read(rootFd: number, name: string): JournalHeader | null {
    let text: string;
    try {
      if (!ownFile(atPath(rootFd, `${name}/${JOURNAL_FILE}`))) return null;
      text = fs.readFileSync(atPath(rootFd, `${name}/${JOURNAL_FILE}`), 'utf8');
    } catch (e) {
      if (isNotExist(e) || errCode(e) === 'ENOTDIR' || errCode(e) === 'ELOOP') return null;
      throw e;
    }
    let h: unknown;
    try {
      h = JSON.parse(text);
    } catch {
      return null;
    }
    return validHeader(h) ? h : null;
  }

  static load(rootFd: number, baseFd: number, name: string, header: JournalHeader, hooks: JournalHooks): Journal {
    return new Journal(rootFd, baseFd, name, { ...header }, hooks);
  }

  #at(rel: string): string {
    return atPath(this.#baseFd, rel);
  }
  #jpath(file: string): string {
    return atPath(this.#rootFd, `${this.#name}/${file}`);
  }
  #step(name: string): void {
    this.#hooks.step?.(name);
  }

  /** Writes a journal file whole: temporary name, fsync, rename, fsync of the journal folder. */
  #writeFile(file: string, text: string): void {
    const tmp = this.#jpath(`${file}.tmp`);
    const fd = fs.openSync(tmp, 'w', 0o600);
    try {
      fs.writeFileSync(fd, text);
      this.#hooks.fsync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, this.#jpath(file));
    fsyncPath(atPath(this.#rootFd, this.#name), this.#hooks.fsync);
  }

  #setState(state: JournalState): void {
    this.#header.state = state;
    this.#writeFile(JOURNAL_FILE, JSON.stringify(this.#header));
    this.#step(`state:${state}`);
  }

  /**
   * Names the undo-trash record that takes what the op moves aside, once committed (state
   * `staging` only; written down with the sealed plan).
   */
  keepIn(trashId: string): void {
    if (this.#header.state !== 'staging') throw new JournalError(`a trash record is named while staging, not ${this.#header.state}`);
    if (!TRASH_ID.test(trashId)) throw new JournalError(`${trashId} is not a trash record id`);
    this.#header.trash = trashId;
  }

  /** Adds a move to the plan (state `staging` only). Segments are written as they fill. */
  add(m: Move): void {
    if (this.#header.state !== 'staging') throw new JournalError(`moves are added while staging, not ${this.#header.state}`);
    this.#pending.push(m);
    this.#pendingChars += m[1].length + m[2].length;
    this.#header.moves++;
    if (this.#pending.length >= SEGMENT_MOVES || this.#pendingChars >= SEGMENT_CHARS) this.#spill();
  }

  #spill(): void {
    if (this.#pending.length === 0) return;
    this.#writeFile(`moves-${this.#header.segments}.json`, JSON.stringify(this.#pending));
    this.#header.segments++;
    this.#pending = [];
    this.#pendingChars = 0;
  }

  /** Every move, in order (forward) or newest first (backward), one segment in memory at a time. */
  *#moves(backward: boolean): Generator<[number, Move]> {
    const n = this.#header.segments;
    let base = 0;
    const sizes: number[] = [];
    for (let s = 0; s < n; s++) {
      const seg = this.#segment(s);
      if (!backward) {
        for (let i = 0; i < seg.length; i++) yield [base + i, seg[i]];
      }
      sizes.push(seg.length);
      base += seg.length;
    }
    if (!backward) return;
    for (let s = n - 1; s >= 0; s--) {
      base -= sizes[s];
      const seg = this.#segment(s);
      for (let i = seg.length - 1; i >= 0; i--) yield [base + i, seg[i]];
    }
  }

  /** True when every segment can be read and every move in it is one a journal of ours would make. */
  valid(): boolean {
    try {
      for (let s = 0; s < this.#header.segments; s++) this.#segment(s);
      return true;
    } catch (e) {
      if (e instanceof JournalError || e instanceof SyntaxError || isNotExist(e)) return false;
      throw e;
    }
  }

  #segment(s: number): Move[] {
    if (!ownFile(this.#jpath(`moves-${s}.json`))) throw new JournalError(`segment ${s} of journal ${this.#name} is not ours`);
    const seg: unknown = JSON.parse(fs.readFileSync(this.#jpath(`moves-${s}.json`), 'utf8'));
    if (!Array.isArray(seg) || !seg.every((m) => validMove(m, this.#header.work))) {
      throw new JournalError(`segment ${s} of journal ${this.#name} is not valid`);
    }
    return seg as Move[];
  }

  /** The aside moves whose entry is still in the working folder, in order. */
  *#asides(): Generator<Move> {
    for (const [, m] of this.#moves(false)) if (m[0] === 'aside' && exists(this.#at(m[2]))) yield m;
  }

  /** Whether a move has happened, read from the one name only it touches. */
  #done(m: Move): boolean {
    return m[0] === 'aside' ? exists(this.#at(m[2])) : !exists(this.#at(m[1]));
  }

  /**
   * Seals the plan (every segment written and durable, then the state `placing`: from here on the
   * op rolls forward) and makes every move. A move that cannot be made undoes them all (state
   * `undoing`, then `undone`) and its error is rethrown; an UndoError when the undo failed too.
   */
  place(): void {
    this.#spill();
    this.#setState('placing');
    this.#forward(false);
  }

  /**
   * Rolls forward every move not yet made (recovery of `placing`), after checking that every one
   * of them still has its source: else, or when a move cannot be made, rolls back instead.
   */
  rollForward(): 'committed' | 'undone' {
    for (const [, m] of this.#moves(false)) {
      if (!this.#done(m) && !exists(this.#at(m[1]))) {
        this.#undoAll(new JournalError(`${m[1]} is missing`));
        return 'undone';
      }
    }
    try {
      this.#forward(true);
    } catch (e) {
      if (e instanceof UndoError) throw e;
      return 'undone';
    }
    return 'committed';
  }

  #forward(idempotent: boolean): void {
    let current: Move | undefined;
    try {
      for (const [i, m] of this.#moves(false)) {
        current = m;
        if (idempotent) {
          if (this.#done(m)) continue;
          // rename() replaces a file silently: after a stop, a name that must be free is checked
          // first. Within the Job the plan has just seen it free, and the world is held.
          if (exists(this.#at(m[2]))) throw new JournalError(`${m[2]} exists already`);
        }
        this.#hooks.rename(this.#at(m[1]), this.#at(m[2]));
        this.#step(`move:${i + 1}`);
      }
    } catch (e) {
      this.#failed = current;
      this.#undoAll(e);
      throw e;
    }
    this.#sync();
    this.#setState('committed');
  }

  /** Undoes every move made, newest first (state `undoing`, then `undone`). Throws an UndoError when some cannot be. */
  rollBack(): void {
    this.#undoAll(null);
  }

  #undoAll(cause: unknown): void {
    if (this.#header.state !== 'undoing') this.#setState('undoing');
    const failed: string[] = [];
    for (const [i, m] of this.#moves(true)) {
      try {
        if (!this.#done(m)) continue;
        const [, from, to] = m;
        if (!exists(this.#at(to))) throw new JournalError(`${to} is missing`);
        if (exists(this.#at(from))) throw new JournalError(`${from} exists`);
        this.#hooks.rename(this.#at(to), this.#at(from));
        this.#step(`undo:${i + 1}`);
      } catch (undo) {
        failed.push(`${m[2]} → ${m[1]}: ${(undo as Error).message}`);
      }
    }
    if (failed.length > 0) {
      // The journal stays `undoing`: the next Job tries again, and nothing is removed meanwhile.
      const why = cause ? ` (after ${(cause as Error).message})` : '';
      throw new UndoError(`${failed.length} moves could not be undone${why}: ${failed.slice(0, 5).join('; ')}`, { cause });
    }
    this.#sync();
    this.#setState('undone');
  }

  /** Makes the moves durable: one syncfs, or an fsync of every folder a move touched. */
  #sync(): void {
    try {
      this.#hooks.syncfs(fs.readlinkSync(fdPath(this.#baseFd)));
      return;
    } catch {
      // Fall back to the folders, below.
    }
    let seen = new Set<string>();
    for (const [, m] of this.#moves(false)) {
      for (const p of [parentOf(m[1]), parentOf(m[2])]) {
        if (seen.has(p)) continue;
        if (seen.size >= SEGMENT_MOVES) seen = new Set(); // bounded; a folder synced twice costs only time
        seen.add(p);
        try {
          fsyncPath(p === '' ? fdPath(this.#baseFd) : this.#at(p), this.#hooks.fsync);
        } catch (e) {
          if (!isNotExist(e)) throw e;
        }
      }
    }
  }

  /**
   * Removes the working folder, then the journal: only in a state that needs neither any more
   * (`staging`, `committed`, `undone`). The base's fd is the caller's. Returns the ids of the
   * undo-trash records that took what a committed op moved aside.
   */
  finish(): string[] {
    const s = this.#header.state;
    if (s === 'placing' || s === 'undoing') throw new JournalError(`journal ${this.#name} is ${s}; it cannot be removed`);
    const kept = s === 'committed' && this.#hooks.keepReplaced ? this.#hooks.keepReplaced(this.#baseFd, this.#header, this.#asides()) : [];
    fs.rmSync(this.#at(this.#header.work), { recursive: true, force: true });
    this.#step('work-removed');
    fs.rmSync(atPath(this.#rootFd, this.#name), { recursive: true, force: true });
    try {
      fsyncPath(fdPath(this.#rootFd), this.#hooks.fsync);
    } catch {
      // Best effort: a journal that comes back after a crash finds its working folder gone and goes again.
    }
    this.#step('journal-removed');
    return kept;
  }
}

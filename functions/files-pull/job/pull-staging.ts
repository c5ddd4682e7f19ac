/**
 * A pull's staging folder: where a pull Job downloads without holding the world, and from where
 * the `pull-place` op, run later under the world's line, links the file into place
 * (docs/pulls.md). At the world's root, named `.felis-edit-<12 hex of sha256("pull", NUL, op id)>`:
 * an editor working name, so listings skip it, no op addresses it, zip never packs it; derived from
 * the pull's op id, so the placement finds it from the op alone and no two pulls share one.
 * Inside, 0700 and the Job user's own:
 * - `data`: the bytes as they arrive;
 * - `pull.json`: `{"v":1,"op","path","name","expires"}`, written before the first byte: the pull it
 *   belongs to, the folder and name it will land as, and until when (Unix ms) a placement can still
 *   be started for it.
 *
 * Nothing else touches it while its pull lives: the working-file sweeps remove regular files
 * (working-files.ts) and folders holding an upload session's `state.json` (upload/session.ts),
 * never a folder holding `pull.json`. `sweepExpiredPulls`, run by a mutation that holds the world,
 * removes one only past its `expires` (plus a margin for clocks): the pull Job's deadline, then the
 * time its finished Job stays listed (FELIS_PULL_KEEP_SECONDS), after which nobody can place it.
 *
 * The folder and its files are opened and checked as every staging folder of ours is
 * (staging-folder.ts): through the folder's descriptor, never following a link, a folder of ours and
 * regular files of ours with one link (`data` only a regular file: the pull gives it to the game's
 * user, and the placement judges its links). The game's user can rename the folder at the root, but
 * nothing inside a 0700 folder of root's.
 * @module
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { TEMP_PREFIX } from '../../../job/runtime/working-files.ts';
import { bestEffort } from '../../../job/volume/failure.ts';
import { atPath, fdPath } from '../../../job/volume/root.ts';
import { StagingFolder, StagingMissing, type StagingTerms } from '../../../job/volume/staging-folder.ts';
import { isEditName } from '../../../lib/protocol/working-names.ts';

const { O_RDONLY, O_WRONLY } = fs.constants;

export const DATA = 'data';
export const RECORD = 'pull.json';
/** What a pull keeps at most without FELIS_PULL_KEEP_SECONDS: the background Job's 2 h and 30 min listed. */
export const DEFAULT_KEEP_SECONDS = 7200 + 1800;
/** Clocks of two Pods on the world's node may differ a little: an expired staging goes this much later. */
export const EXPIRY_MARGIN_MS = 10 * 60_000;
const MAX_RECORD_BYTES = 4096;
const OP_ID = /^[0-9a-f]{16}$/;

export interface PullRecord {
  /** The pull's op id. */
  op: string;
  /** The folder it lands in ("" the root) and its name there, as the pull judged them. */
  path: string;
  name: string;
  /** Unix ms: no placement can be started after this; then any holding mutation may remove it. */
  expires: number;
}

/** Something at the staging's name is not the pull's own staging. */
export class StagingNotOurs extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StagingNotOurs';
  }
}

/** How the staging folder's refusals name a pull's folder and files (pull-place passes them on). */
const PULL_STAGING: StagingTerms = { folder: 'the staging folder', file: (name) => (name === DATA ? 'the staged file' : 'the staged record'), notOurs: StagingNotOurs };

export function isOpId(id: string | undefined): id is string {
  return typeof id === 'string' && OP_ID.test(id);
}

/** The staging folder's name for the pull `opId`. */
export function stagingName(opId: string): string {
  return TEMP_PREFIX + createHash('sha256').update(`pull\0${opId}`).digest('hex').slice(0, 12);
}

/** FELIS_PULL_KEEP_SECONDS, or the default for a Job rendered without it. */
export function keepSecondsFrom(env: Record<string, string | undefined>): number {
  const v = env.FELIS_PULL_KEEP_SECONDS;
  return v !== undefined && /^\d{1,9}$/.test(v) && Number(v) > 0 ? Number(v) : DEFAULT_KEEP_SECONDS;
}

/** A staging folder open for one op. Close it when done. */
export class PullStaging {
  readonly #folder: StagingFolder;

  private constructor(folder: StagingFolder) {
    this.#folder = folder;
  }

  get fd(): number {
    return this.#folder.fd;
  }

  get name(): string {
    return this.#folder.name;
  }

  /**
   * The pull's side: creates the folder for `record.op` (0700; EEXIST when anything is at its
   * name), writes its record and opens `data` for writing. Returns the staging and the data's fd.
   */
  static create(rootFd: number, record: PullRecord): { staging: PullStaging; dataFd: number } {
    const staging = new PullStaging(StagingFolder.create(rootFd, stagingName(record.op), PULL_STAGING));
    try {
      const rec = staging.#folder.createFile(RECORD, O_WRONLY);
      try {
        fs.writeFileSync(rec, JSON.stringify({ v: 1, ...record }));
      } finally {
        fs.closeSync(rec);
      }
      const dataFd = staging.#folder.createFile(DATA, O_WRONLY, 0o644);
      fs.fchmodSync(dataFd, 0o644);
      return { staging, dataFd };
    } catch (e) {
      staging.remove();
      staging.close();
      throw e;
    }
  }

  /** The placement's side: the staging of pull `opId`, or undefined when there is none. StagingNotOurs when something else is there. */
  static open(rootFd: number, opId: string): PullStaging | undefined {
    try {
      return PullStaging.openNamed(rootFd, stagingName(opId));
    } catch (e) {
      if (e instanceof StagingMissing) return undefined;
      throw e;
    }
  }

  /** Opens the staging folder at `name` (the sweep knows names, not op ids). */
  static openNamed(rootFd: number, name: string): PullStaging {
    return new PullStaging(StagingFolder.open(rootFd, name, PULL_STAGING));
  }

  at(file: string): string {
    return this.#folder.at(file);
  }

  /** The record, or undefined when it is missing or not one of ours. */
  record(): PullRecord | undefined {
    let raw: Buffer | undefined;
    try {
      raw = this.#folder.readSmall(RECORD, MAX_RECORD_BYTES);
    } catch {
      return undefined;
    }
    return raw === undefined ? undefined : parseRecord(raw.toString('utf8'));
  }

  /**
   * Opens `data` to read: a regular file (its owner is the game's once the pull gave it back, so not
   * checked; its links are the placement's to judge). ENOENT passes through.
   */
  openData(): { fd: number; st: fs.BigIntStats } {
    return this.#folder.openFile(DATA, O_RDONLY, { owned: false, oneLink: false });
  }

  /** Removes what is inside, then the folder by its name while the name still is this folder. */
  remove(): void {
    this.#folder.removeAll();
  }

  close(): void {
    this.#folder.close();
  }
}

export function parseRecord(text: string): PullRecord | undefined {
  try {
    const r = JSON.parse(text) as PullRecord & { v: unknown };
    if (typeof r !== 'object' || r === null || r.v !== 1 || !isOpId(r.op) || typeof r.path !== 'string' || typeof r.name !== 'string' || r.name === '') return undefined;
    if (!Number.isSafeInteger(r.expires)) return undefined;
    return { op: r.op, path: r.path, name: r.name, expires: r.expires };
  } catch {
    return undefined;
  }
}

/**
 * Removes the stagings at the root whose placement can no longer be started (their `expires`, plus
 * the margin, has passed): a pull Job that died mid-download, a download nobody placed, one refused
 * because the server had been started. Only a folder of ours holding a readable record; anything
 * else stays. Run only by a mutation holding the world (no placement runs meanwhile). Returns how
 * many went.
 */
export function sweepExpiredPulls(rootFd: number, now: number): number {
  let removed = 0;
  bestEffort(() => {
    for (const name of fs.readdirSync(fdPath(rootFd))) {
      if (!isEditName(name)) continue;
      bestEffort(() => {
        if (!fs.lstatSync(atPath(rootFd, name)).isDirectory()) return;
        let staging: PullStaging;
        try {
          staging = PullStaging.openNamed(rootFd, name);
        } catch {
          return;
        }
        try {
          const r = staging.record();
          if (!r || stagingName(r.op) !== name || now < r.expires + EXPIRY_MARGIN_MS) return;
          staging.remove();
          removed++;
        } finally {
          staging.close();
        }
      });
    }
  });
  return removed;
}

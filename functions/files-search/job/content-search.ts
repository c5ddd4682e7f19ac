/**
 * A content search (`search` with `content`): the lines of the text files under `path` that hold
 * `content` (content-match.ts: ASCII letters in any case, other bytes exactly), optionally only
 * in files whose name matches `q` (name-match.ts), at most `limit` lines.
 *
 * The walk holds to the world root's rules as the name search's does: each folder is opened
 * relative to its parent's fd with O_DIRECTORY|O_NOFOLLOW, links are never followed (a link is not
 * searched, nor descended), the ops' working names are skipped. It goes depth first in directory
 * order, one open folder per level, so its memory follows the depth, never a folder's size; the
 * matches come in that order (not sorted).
 *
 * What is searched: regular files only. A NUL in a file's first 8 KiB marks it binary: skipped.
 * A text file over CONTENT_MAX_FILE_BYTES is skipped and makes the answer `truncated`. The
 * withheld file is never opened (its name, or its identity seen by lstat before any open), and a
 * file holding a withheld content is judged by the withheld rule and skipped. The root
 * server.properties (and any link to it) is searched on its redacted text, as a read shows it,
 * so a secret value is not findable, not even as a yes or no.
 *
 * Budgets: SEARCH_BUDGET_MS of time and CONTENT_BUDGET_BYTES of bytes read; either ending, or a
 * `limit + 1`th match, stops the search with `truncated`.
 * @module
 */
import fs from 'node:fs';
import { walkClock } from '../../../job/op-kit/walk-clock.ts';
import { MAX_READ_BYTES } from '../../../job/runtime/types.ts';
import { withheldRule } from '../../../job/runtime/withheld.ts';
import { readFrom0 } from '../../../job/runtime/withheld-ledger.ts';
import { isWorkingName } from '../../../job/runtime/working-files.ts';
import { fail, failure } from '../../../job/volume/failure.ts';
import { isSecretName, propertiesIdentity, redactProperties } from '../../../job/volume/guard.ts';
import { clean } from '../../../job/volume/pathutil.ts';
import { atPath, fdPath, identityOf, sameIdentity, type WorldRoot } from '../../../job/volume/root.ts';
import {
  CONTENT_BUDGET_BYTES,
  CONTENT_MAX_BYTES,
  CONTENT_MAX_FILE_BYTES,
  CONTENT_MIN_BYTES,
  SEARCH_BUDGET_MS,
  SEARCH_DEFAULT_LIMIT,
  SEARCH_MAX_LIMIT,
  SEARCH_MIN_QUERY,
} from '../../../lib/protocol/limits.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import type { ContentReport } from '../op.ts';

export type { ContentMatch, ContentReport } from '../op.ts';

import { contentScanner, needleOf, type ScanEnd } from './content-match.ts';
import { nameMatcher, queryLength } from './name-match.ts';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
const FILE_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const ASCII = /^[\x00-\x7f]*$/;

export interface ContentSearchOptions {
  content: string;
  /** A name filter, as a name search's `q`. */
  q?: string;
  limit?: number;
  budgetMs?: number;
  budgetBytes?: number;
  maxFileBytes?: number;
  now?: () => number;
  blockBytes?: number;
}

/** Why a content text is refused, or undefined: the route's rule, held again by the Job. */
export function contentRefusal(content: string): string | undefined {
  const n = Buffer.byteLength(content, 'utf8');
  if (n < CONTENT_MIN_BYTES || n > CONTENT_MAX_BYTES) return `content= must be ${CONTENT_MIN_BYTES} to ${CONTENT_MAX_BYTES} bytes of UTF-8 text; it is ${n}`;
  if (/[\r\n\0]/.test(content)) return 'content= is found within one line: it may hold no line break and no NUL';
  return undefined;
}

interface Frame {
  fd: number;
  dir: fs.Dir;
  /** The folder's path from the root, "" for the root. */
  prefix: string;
}

const bytes = (latin1: string) => Buffer.from(latin1, 'latin1');
const utf8 = (latin1: string) => (ASCII.test(latin1) ? latin1 : bytes(latin1).toString('utf8'));
const join = (prefix: string, name: string) => (prefix === '' ? name : `${prefix}/${name}`);

/** The whole content search on an open root; see the module note. */
export async function contentSearchTree(root: WorldRoot, path: string, o: ContentSearchOptions): Promise<Result> {
  const name = path === '' ? '.' : path;
  const refused = contentRefusal(o.content);
  if (refused) return fail('bad_path', refused);
  if (o.q !== undefined && queryLength(o.q) < SEARCH_MIN_QUERY) return fail('bad_path', `a search needs at least ${SEARCH_MIN_QUERY} characters`);
  const limit = o.limit !== undefined && Number.isInteger(o.limit) && o.limit >= 1 ? Math.min(o.limit, SEARCH_MAX_LIMIT) : SEARCH_DEFAULT_LIMIT;
  const pastBudget = walkClock(o.budgetMs ?? SEARCH_BUDGET_MS, o.now);
  const budget = { bytes: o.budgetBytes ?? CONTENT_BUDGET_BYTES };
  const maxFileBytes = o.maxFileBytes ?? CONTENT_MAX_FILE_BYTES;
  const scan = contentScanner(needleOf(o.content), { maxFileBytes, budget, pastBudget, blockBytes: o.blockBytes });
  const nameOk = o.q === undefined ? null : nameMatcher(o.q);

  let baseFd: number;
  try {
    baseFd = root.openDir(name);
  } catch (e) {
    return failure(name, e, 'open');
  }
  const report: ContentReport = { matches: [], truncated: false, scanned_files: 0, scanned_bytes: 0 };
  const withheld = withheldRule(root);
  const props = propertiesIdentity(root);
  const base = clean(path);
  const frames: Frame[] = [];

  /** Searches one file; false when the search is over (limit or budget). */
  const searchFile = async (dirFd: number, nameBytes: Buffer, filePath: string): Promise<boolean> => {
    const at = atPath(dirFd, nameBytes);
    let st: fs.BigIntStats | undefined;
    try {
      st = fs.lstatSync(at, { bigint: true, throwIfNoEntry: false });
    } catch {
      return true;
    }
    // The withheld file is known by its identity before anything opens it.
    if (!st?.isFile() || withheld.isIdentity(identityOf(st))) return true;
    let fd: number;
    try {
      fd = fs.openSync(at, FILE_FLAGS);
    } catch {
      return true; // gone, swapped for a link, or not readable: the search goes on without it
    }
    try {
      const now = fs.fstatSync(fd, { bigint: true });
      const id = identityOf(now);
      // Swapped since the lstat: not what was judged, so not searched.
      if (!now.isFile() || !sameIdentity(id, identityOf(st))) return true;
      let inMemory: Buffer | null = null;
      if (sameIdentity(id, props)) {
        // Searched as a read shows it: redacted. Larger than a read shows: not searched.
        if (now.size > BigInt(MAX_READ_BYTES)) {
          report.truncated = true;
          return true;
        }
        inMemory = redactProperties(readFrom0(fd, MAX_READ_BYTES));
      } else if (withheld.needsBytes(now.size)) {
        const v = withheld.judge(fd, now);
        if (v.withheld) return true;
        inMemory = v.bytes ?? null;
      }
      const before = budget.bytes;
      report.scanned_files++;
      let end: ScanEnd;
      try {
        end = await scan({
          size: inMemory ? inMemory.length : Number(now.size),
          read: inMemory ? (buf, off, len, pos) => inMemory.copy(buf, off, pos, Math.min(pos + len, inMemory.length)) : (buf, off, len, pos) => fs.readSync(fd, buf, off, len, pos),
          onMatch: (hit) => {
            if (report.matches.length === limit) return false;
            report.matches.push({ path: filePath, ...hit });
            return true;
          },
        });
      } catch {
        end = 'done'; // unreadable part-way (an I/O error): what it found stays, the search goes on
      } finally {
        report.scanned_bytes += before - budget.bytes;
      }
      if (end === 'too-large') report.truncated = true;
      if (end === 'stopped' || end === 'budget') {
        report.truncated = true;
        return false;
      }
      return true;
    } finally {
      fs.closeSync(fd);
    }
  };

  try {
    try {
      frames.push({ fd: baseFd, dir: fs.opendirSync(fdPath(baseFd), { encoding: 'latin1', bufferSize: 256 }), prefix: base === '.' ? '' : base });
    } catch (e) {
      fs.closeSync(baseFd);
      return failure(name, e, 'readdirent');
    }
    while (frames.length > 0) {
      const top = frames[frames.length - 1];
      let d: fs.Dirent<string> | null;
      try {
        d = top.dir.readSync();
      } catch {
        d = null; // unreadable part-way: the rest of this folder is left out
      }
      if (d === null) {
        closeFrame(frames.pop()!);
        continue;
      }
      // The editor's, not the world's: never searched nor entered. All of them start with a dot.
      if (d.name.charCodeAt(0) === 0x2e && isWorkingName(d.name)) continue;
      if (d.isDirectory()) {
        let fd: number;
        try {
          fd = fs.openSync(atPath(top.fd, bytes(d.name)), DIR_FLAGS);
        } catch {
          continue; // gone, swapped for a link, not readable
        }
        try {
          frames.push({ fd, dir: fs.opendirSync(fdPath(fd), { encoding: 'latin1', bufferSize: 256 }), prefix: join(top.prefix, utf8(d.name)) });
        } catch {
          fs.closeSync(fd);
        }
        continue;
      }
      // Links and special files are never searched: only regular files.
      if (!d.isFile()) continue;
      const shown = utf8(d.name);
      if (nameOk && !nameOk(shown)) continue;
      const filePath = join(top.prefix, shown);
      if (isSecretName(filePath)) continue;
      if (await pastBudget()) {
        report.truncated = true;
        break;
      }
      if (!(await searchFile(top.fd, bytes(d.name), filePath))) break;
    }
  } finally {
    for (const f of frames) closeFrame(f);
  }
  return { report };
}

function closeFrame(f: Frame): void {
  try {
    f.dir.closeSync();
  } catch {
    // already closed
  }
  fs.closeSync(f.fd);
}

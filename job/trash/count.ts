/**
 * What one trash slot holds: bytes of regular files and entries in all, counted through directory
 * fds without following a link, and whether it holds a guarded file.
 *
 * On the way, each regular file is judged:
 * - the withheld file (by the identity it had when the op began, or by a withheld content) makes the
 *   slot `secret`, and its content is kept in the record so a restore can remember it again;
 * - a second name of a guarded file (a hard link to the file `config/paper-global.yml` or the root
 *   `server.properties` names now, which still has it) is removed for good rather than kept: it
 *   holds the secret or the RCON password, and only the file's own name may (docs/withheld-file.md);
 * - a guarded file counts as an entry of no bytes, as listings show it.
 *
 * @module
 */
import fs from 'node:fs';
import type { OpContext } from '../runtime/types.ts';
import { type Content, contentAt, type WithheldRule, withheldEntry, withheldRule } from '../runtime/withheld.ts';
import { bestEffort } from '../volume/failure.ts';
import { propertiesIdentity } from '../volume/guard.ts';
import { atPath, fdPath, type Identity, identityOf, sameIdentity } from '../volume/root.ts';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;
/** Folders deeper than this are counted as entries only: a hostile tree costs a bounded stack. */
const MAX_DEPTH = 512;
/** Withheld contents kept per item: the ledger's own bound. */
const MAX_CONTENTS = 64;

/** Why a trash item may not go back anywhere but where it was: what it held when it went in. */
export type Guard = 'secret' | 'properties';

export interface Count {
  bytes: number;
  entries: number;
  /** Set when the slot holds a guarded file. */
  guard?: Guard;
  /** The withheld contents found (at most MAX_CONTENTS). */
  withheld: Content[];
}

/** What the slots of a record are judged by, looked up once for all of them. */
export interface Judge {
  rule: WithheldRule;
  /** The live guarded files' identities now: a second name of one is not kept. */
  secret: Identity | null;
  properties: Identity | null;
  /** Remove a second name of a live guarded file (an op putting it in); else count it as guarded (a restore judging). */
  drop: boolean;
}

export function judgeOf(ctx: OpContext, drop = true): Judge {
  const w = withheldEntry(ctx.root);
  return { rule: withheldRule(ctx.root), secret: w ? identityOf(w.st) : null, properties: propertiesIdentity(ctx.root), drop };
}

export function countTree(dirFd: number, name: string, judge: Judge): Count {
  const c: Count = { bytes: 0, entries: 0, withheld: [] };
  walk(dirFd, name, judge, c, 0);
  return c;
}

/** The guard of a second name of a live guarded file (another link to it exists), if it is one. */
function secondName(st: fs.BigIntStats, judge: Judge): Guard | undefined {
  if (!st.isFile() || st.nlink < 2n) return undefined;
  const id = identityOf(st);
  if (sameIdentity(id, judge.secret)) return 'secret';
  if (sameIdentity(id, judge.properties)) return 'properties';
  return undefined;
}

function withheldFile(dirFd: number, name: string | Buffer, st: fs.BigIntStats, judge: Judge): boolean {
  return judge.rule.isIdentity(identityOf(st)) || judge.rule.judgeAt(dirFd, name, st);
}

function walk(dirFd: number, name: string | Buffer, judge: Judge, c: Count, depth: number): void {
  let st: fs.BigIntStats;
  try {
    st = fs.lstatSync(atPath(dirFd, name), { bigint: true });
  } catch {
    return;
  }
  const second = secondName(st, judge);
  if (second && judge.drop) {
    bestEffort(() => fs.unlinkSync(atPath(dirFd, name)));
    return;
  }
  c.entries++;
  if (second) {
    c.guard = c.guard === 'secret' ? 'secret' : second;
    return;
  }
  if (st.isFile()) {
    if (withheldFile(dirFd, name, st, judge)) {
      c.guard = 'secret';
      const content = contentAt(dirFd, name);
      if (content && c.withheld.length < MAX_CONTENTS) c.withheld.push(content);
    } else {
      c.bytes += Number(st.size);
    }
  }
  if (!st.isDirectory() || depth >= MAX_DEPTH) return;
  let fd: number;
  try {
    fd = fs.openSync(atPath(dirFd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    return;
  }
  try {
    const d = fs.opendirSync(fdPath(fd), { encoding: 'buffer' as BufferEncoding });
    try {
      for (let e = d.readSync() as unknown as fs.Dirent<Buffer> | null; e; e = d.readSync() as unknown as fs.Dirent<Buffer> | null) {
        walk(fd, e.name, judge, c, depth + 1);
      }
    } finally {
      d.closeSync();
    }
  } finally {
    fs.closeSync(fd);
  }
}

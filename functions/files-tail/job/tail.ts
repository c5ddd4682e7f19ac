/**
 * The tail op's run: the file opened as a read opens it (inside the world, links inside followed,
 * never the withheld file, regular files only, O_NONBLOCK so a FIFO cannot hang the Job), then its
 * last lines read backwards from the size it had (last-lines.ts). The root server.properties is
 * tailed from its redacted text, as a read sends it, and never followed. With `follow`, the Job
 * serves its last `lines` lines and what is appended from then on instead (follow-serve.ts), or
 * the lines after `from` (a resume), opening the name again as here at each rotation.
 * @module
 */
import fs from 'node:fs';
import { openReadable } from '../../../job/op-kit/open-readable.ts';
import { MAX_READ_BYTES, type OpContext, type OpRequestOf } from '../../../job/runtime/types.ts';
import { withheldRule } from '../../../job/runtime/withheld.ts';
import { fail, failure } from '../../../job/volume/failure.ts';
import { propertiesIdentity, redactProperties } from '../../../job/volume/guard.ts';
import { clean } from '../../../job/volume/pathutil.ts';
import { readCapped } from '../../../job/volume/read-capped.ts';
import { identityOf, sameIdentity } from '../../../job/volume/root.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import { TAIL_LINES, TAIL_MAX_LINE, TAIL_MAX_SCAN, type TailReport } from '../op.ts';
import type { FollowedFile } from './follow.ts';
import { parseFrom, serveFollow } from './follow-serve.ts';
import { lastLines, linesStart, type ReadAt } from './last-lines.ts';

const { O_RDONLY, O_NONBLOCK } = fs.constants;

/** How long a follow's Job waits for its caller. */
const FOLLOW_IDLE_MS = 60_000;

export function tail(ctx: OpContext, req: OpRequestOf<'tail'>, env: Record<string, string | undefined> = process.env): Result | Promise<Result> {
  const name = req.path === '' ? '.' : req.path;
  const opened = openReadable(ctx, name);
  if (!('fd' in opened)) return opened;
  const { fd, st } = opened;
  try {
    let readAt: ReadAt = (buf, len, pos) => fs.readSync(fd, buf, 0, len, pos);
    let size = Number(st.size);
    const properties = sameIdentity(identityOf(st), propertiesIdentity(ctx.root));
    if (req.follow) {
      // Its lines would go out unredacted.
      if (properties) return fail('bad_path', `${name} cannot be followed; tail it instead`);
      // Without a resume, the follow begins where the last `lines` lines begin: the tail comes first, each line with its id.
      const start = req.from === undefined ? { offset: linesStart(readAt, size, { lines: req.lines ?? TAIL_LINES.default, maxScan: TAIL_MAX_SCAN }) } : parseFrom(req.from);
      if (start === undefined) return fail('bad_path', `the follow's start ${JSON.stringify(req.from)} is not an event id`);
      // What it sent went to its caller; the report says only where the follow began.
      return followed(ctx, name, start, env).then((): Result => ({ report: { path: cleanPath(req.path), lines: [], truncated: false, size } satisfies TailReport }));
    }
    if (properties) {
      if (size > MAX_READ_BYTES) return fail('too_large', `${name} is ${size} bytes; the editor reads at most ${MAX_READ_BYTES}`);
      const text = redactProperties(readCapped(fd, MAX_READ_BYTES));
      readAt = (buf, len, pos) => text.copy(buf, 0, pos, Math.min(text.length, pos + len));
      size = text.length;
    }
    let got;
    try {
      got = lastLines(readAt, size, { lines: req.lines ?? TAIL_LINES.default, maxScan: TAIL_MAX_SCAN, maxLine: TAIL_MAX_LINE });
    } catch (e) {
      return failure(name, e, 'read');
    }
    const report: TailReport = { path: cleanPath(req.path), lines: got.lines, truncated: got.truncated, size };
    return { report };
  } finally {
    fs.closeSync(fd);
  }
}

export const runs = { tail };

const cleanPath = (p: string) => {
  const c = clean(p);
  return c === '.' ? '' : c;
};

/** The name opened as the tail opened it, each time the follow asks (a rotation): never the withheld file, regular files only. */
function followedFile(ctx: OpContext, name: string): FollowedFile {
  return {
    open: () => {
      const fd = ctx.root.openFile(name, O_RDONLY | O_NONBLOCK);
      try {
        const st = fs.fstatSync(fd, { bigint: true });
        if (!st.isFile() || withheldRule(ctx.root).judge(fd, st).withheld || sameIdentity(identityOf(st), propertiesIdentity(ctx.root)))
          throw new Error(`${name} is no longer a file that can be followed`);
        return fd;
      } catch (e) {
        fs.closeSync(fd);
        throw e;
      }
    },
    stat: () => {
      try {
        const st = ctx.root.stat(name);
        return { ino: st.ino, size: st.size };
      } catch {
        return null;
      }
    },
  };
}

/** Serves the follow until it ends; the lines sent. */
async function followed(ctx: OpContext, name: string, start: { ino?: bigint; offset: number }, env: Record<string, string | undefined>): Promise<number> {
  const r = await serveFollow(env, { file: followedFile(ctx, name), start, maxLine: TAIL_MAX_LINE, idleMs: FOLLOW_IDLE_MS });
  return r.lines;
}

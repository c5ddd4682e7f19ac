/**
 * The tail op's run: the file opened as a read opens it (inside the world, links inside followed,
 * never the withheld file, regular files only, O_NONBLOCK so a FIFO cannot hang the Job), then its
 * last lines read backwards from the size it had (last-lines.ts). The root server.properties is
 * tailed from its redacted text, as a read sends it.
 * @module
 */
import fs from 'node:fs';
import { MAX_READ_BYTES, type OpContext, type OpRequestOf } from '../../../job/runtime/types.ts';
import { withheldRule } from '../../../job/runtime/withheld.ts';
import { fail, failure, msg } from '../../../job/volume/failure.ts';
import { isSecretName, propertiesIdentity, redactProperties, secretMessage } from '../../../job/volume/guard.ts';
import { clean } from '../../../job/volume/pathutil.ts';
import { readCapped } from '../../../job/volume/read-capped.ts';
import { identityOf, sameIdentity } from '../../../job/volume/root.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import { TAIL_LINES, TAIL_MAX_LINE, TAIL_MAX_SCAN, type TailReport } from '../op.ts';
import { lastLines, type ReadAt } from './last-lines.ts';

const { O_RDONLY, O_NONBLOCK } = fs.constants;

export function tail(ctx: OpContext, req: OpRequestOf<'tail'>): Result {
  const name = req.path === '' ? '.' : req.path;
  if (isSecretName(name)) return fail('bad_path', secretMessage(name));
  let fd: number;
  try {
    fd = ctx.root.openFile(name, O_RDONLY | O_NONBLOCK);
  } catch (e) {
    return failure(name, e, 'open');
  }
  try {
    let st: fs.BigIntStats;
    try {
      st = fs.fstatSync(fd, { bigint: true });
    } catch (e) {
      return failure(name, e, 'stat');
    }
    if (st.isDirectory()) return fail('bad_path', msg.isDir(name));
    try {
      if (withheldRule(ctx.root).judge(fd, st).withheld) return fail('bad_path', secretMessage(name));
    } catch (e) {
      return failure(name, e, 'read');
    }
    if (!st.isFile()) return fail('bad_path', msg.notRegular(name));

    let readAt: ReadAt = (buf, len, pos) => fs.readSync(fd, buf, 0, len, pos);
    let size = Number(st.size);
    if (sameIdentity(identityOf(st), propertiesIdentity(ctx.root))) {
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
    const cleaned = clean(req.path);
    const report: TailReport = { path: cleaned === '.' ? '' : cleaned, lines: got.lines, truncated: got.truncated, size };
    return { report };
  } finally {
    fs.closeSync(fd);
  }
}

export const runs = { tail };

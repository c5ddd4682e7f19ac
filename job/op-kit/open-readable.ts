/**
 * Opening a file to read its bytes as a read opens it, for the ops that read one file whole or in
 * part (nbt, tail): refused by name when it is the withheld file, opened inside the world (links
 * inside followed, O_NONBLOCK so a FIFO cannot hang the Job), then refused when it is a folder,
 * the withheld file by identity or content, or anything but a regular file.
 * @module
 */
import fs from 'node:fs';
import type { Result } from '../../lib/protocol/result.ts';
import type { OpContext } from '../runtime/types.ts';
import { type Verdict, withheldRule } from '../runtime/withheld.ts';
import { fail, failure, msg } from '../volume/failure.ts';
import { isSecretName, secretMessage } from '../volume/guard.ts';

const { O_RDONLY, O_NONBLOCK } = fs.constants;

export interface OpenedFile {
  fd: number;
  st: fs.BigIntStats;
  /** What the withheld rule read to judge it, when it had to (`bytes`: the whole file). */
  verdict: Extract<Verdict, { withheld: false }>;
}

/** The opened file (the caller closes `fd`), or the refusal naming `name`. */
export function openReadable(ctx: OpContext, name: string): OpenedFile | Result {
  if (isSecretName(name)) return fail('bad_path', secretMessage(name));
  let fd: number;
  try {
    fd = ctx.root.openFile(name, O_RDONLY | O_NONBLOCK);
  } catch (e) {
    return failure(name, e, 'open');
  }
  const refuse = (r: Result): Result => {
    fs.closeSync(fd);
    return r;
  };
  let st: fs.BigIntStats;
  try {
    st = fs.fstatSync(fd, { bigint: true });
  } catch (e) {
    return refuse(failure(name, e, 'stat'));
  }
  if (st.isDirectory()) return refuse(fail('bad_path', msg.isDir(name)));
  let verdict: Verdict;
  try {
    verdict = withheldRule(ctx.root).judge(fd, st);
  } catch (e) {
    return refuse(failure(name, e, 'read'));
  }
  if (verdict.withheld) return refuse(fail('bad_path', secretMessage(name)));
  if (!st.isFile()) return refuse(fail('bad_path', msg.notRegular(name)));
  return { fd, st, verdict };
}

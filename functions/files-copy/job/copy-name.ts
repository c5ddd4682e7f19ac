/**
 * The name a copy takes beside its original when the caller gives none, as file managers name
 * them: `a.txt` → `a copy.txt`, then `a copy 2.txt`, `a copy 3.txt`, … A double ending such as
 * `.tar.gz` counts as one ending (`x copy.tar.gz`, not `x.tar copy.gz`); a folder has no ending,
 * and neither has a dotfile (`.env` → `.env copy`). Pure.
 *
 * @module
 */
import { NAME_MAX } from '../../../lib/protocol/names.ts';

/** Numbered names tried before giving up: `a copy`, `a copy 2`, … `a copy 1000`. */
export const MAX_COPY_NAME_TRIES = 1000;
/** `.tar.gz`, `.tar.xz`, `.tar.zst`, …: an archive's second ending belongs to the first. */
const DOUBLE_ENDING = /\.tar\.[A-Za-z0-9]{1,4}$/i;

/** A name split into its stem and its ending (`''` when it has none). */
export function splitEnding(name: string, isDir: boolean): { stem: string; ending: string } {
  if (isDir) return { stem: name, ending: '' };
  const double = DOUBLE_ENDING.exec(name);
  // The stem must keep something before its ending: `.tar.gz` alone is a dotfile's name.
  if (double && double.index > 0 && !/^\.+$/.test(name.slice(0, double.index))) return { stem: name.slice(0, double.index), ending: double[0] };
  const lead = /^\.*/.exec(name)![0].length; // leading dots start a dotfile's name, not an ending
  const dot = name.lastIndexOf('.');
  if (dot <= lead || dot === name.length - 1) return { stem: name, ending: '' };
  return { stem: name.slice(0, dot), ending: name.slice(dot) };
}

/** The n-th candidate (1: `a copy.txt`, 2: `a copy 2.txt`, …). */
export function copyName(name: string, isDir: boolean, n: number): string {
  const { stem, ending } = splitEnding(name, isDir);
  return `${stem} copy${n === 1 ? '' : ` ${n}`}${ending}`;
}

/**
 * The first candidate `taken` says is free, or undefined when the first MAX_COPY_NAME_TRIES are
 * all taken or the name would be longer than a file name may be.
 */
export function freeCopyName(name: string, isDir: boolean, taken: (candidate: string) => boolean): string | undefined {
  for (let n = 1; n <= MAX_COPY_NAME_TRIES; n++) {
    const c = copyName(name, isDir, n);
    if (Buffer.byteLength(c) > NAME_MAX) return undefined;
    if (!taken(c)) return c;
  }
  return undefined;
}

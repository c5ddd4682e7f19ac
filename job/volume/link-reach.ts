/**
 * Where a link's target text leads from the link's own place, judged lexically, as the world
 * root's resolution walks it (root.ts: `..` pops the folder the walk holds, never asked of the
 * kernel, and popping past the root is an escape). The one rule for "this link leads outside the
 * world" by which a copy (functions/files-copy/job/copy-links.ts) and a move or restore (moved-links.ts) judge a link
 * at the place it lands. Whether what it names exists, or is a link leading on, is for the caller
 * to ask of the root.
 *
 * @module
 */
import { clean, dir, leadsOutside } from './pathutil.ts';

/** A target taken from the link's own folder: not absolute, not empty, no NUL byte. */
export function isRelativeTarget(target: string): boolean {
  return target !== '' && !target.startsWith('/') && !target.includes('\0');
}

/**
 * The root-relative path a link at `linkPath` (root-relative, cleaned, no link in its folders)
 * names with `target`; null when the target is not relative or climbs above the root.
 */
export function targetPath(linkPath: string, target: string): string | null {
  if (!isRelativeTarget(target)) return null;
  const p = clean(`${dir(linkPath)}/${target}`);
  return leadsOutside(p) || p.startsWith('/') ? null : p;
}

/**
 * A relative link at `linkPath` whose target climbs above the world's root. Absolute targets are
 * not this rule's: no move changes where they lead, and every op already takes them as leading out.
 */
export function climbsOut(linkPath: string, target: string): boolean {
  return isRelativeTarget(target) && targetPath(linkPath, target) === null;
}

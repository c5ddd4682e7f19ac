/**
 * Which links a copy re-creates. A link is copied as a link (its target text unchanged) only when
 * it stays inside the world from where the copy puts it: a relative target that resolves, through
 * the world root's own resolution (which refuses every escape and follows links inside), to
 * something that exists. A target inside the copied tree is judged at the original (the copy's
 * counterpart is built beside it); one outside the tree is judged from the copy's place, since the
 * same `../` text may lead elsewhere from there. Both places are paths as the kernel names their
 * folders (a `to` spelled through a link is judged where it really leads), and a target that
 * climbs above the root from either is out by link-reach.ts, the rule a move keeps too. Absolute
 * targets, escapes, dangling links and links to the withheld file are left out (the caller
 * counts them).
 *
 * @module
 */

import type { WithheldRule } from '../../../job/runtime/withheld.ts';
import { targetPath } from '../../../job/volume/link-reach.ts';
import { identityOf, type WorldRoot } from '../../../job/volume/root.ts';

export interface LinkPlace {
  /** Root-relative path of the link in the original tree, its folders as the kernel names them. */
  srcLink: string;
  /** Root-relative path of the original tree (the copied folder), as the kernel names it. */
  srcTree: string;
  /** Root-relative path the link will have once the copy lands, its folders as the kernel names them. */
  destLink: string;
}

function within(p: string, tree: string): boolean {
  return tree === '.' || p === tree || p.startsWith(`${tree}/`);
}

/** Resolves inside the world to something that exists, and not to the withheld file. */
function resolvesInside(root: WorldRoot, rule: WithheldRule, path: string): boolean {
  try {
    return !rule.isIdentity(identityOf(root.stat(path)));
  } catch {
    return false; // an escape, a dangling link, a loop: not inside
  }
}

export function keepsLink(root: WorldRoot, rule: WithheldRule, target: string, at: LinkPlace): boolean {
  // Lexically first (link-reach.ts, the rule a move judges by too), then through the root.
  const fromSrc = targetPath(at.srcLink, target);
  if (fromSrc === null) return false;
  if (within(fromSrc, at.srcTree)) return resolvesInside(root, rule, at.srcLink);
  const fromDest = targetPath(at.destLink, target);
  if (fromDest === null) return false;
  return resolvesInside(root, rule, fromDest) && resolvesInside(root, rule, at.srcLink);
}

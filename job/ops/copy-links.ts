/**
 * Which links a copy re-creates. A link is copied as a link (its target text unchanged) only when
 * it stays inside the world from where the copy puts it: a relative target that resolves, through
 * the world root's own resolution (which refuses every escape and follows links inside), to
 * something that exists. A target inside the copied tree is judged at the original (the copy's
 * counterpart is built beside it); one outside the tree is judged from the copy's place, since the
 * same `../` text may lead elsewhere from there. Absolute targets, escapes, dangling links and
 * links to the withheld file are left out (the caller counts them).
 *
 * @module
 */
import { clean, dir, leadsOutside } from '../pathutil.ts';
import { identityOf, type WorldRoot } from '../root.ts';
import type { WithheldRule } from '../withheld.ts';

export interface LinkPlace {
  /** Root-relative path of the link in the original tree. */
  srcLink: string;
  /** Root-relative path of the original tree (the copied folder). */
  srcTree: string;
  /** Root-relative path the link will have once the copy lands. */
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
  if (target === '' || target.startsWith('/') || target.includes('\0')) return false;
  const fromSrc = clean(`${dir(at.srcLink)}/${target}`);
  if (leadsOutside(fromSrc) || fromSrc.startsWith('/')) return false;
  if (within(fromSrc, at.srcTree)) return resolvesInside(root, rule, at.srcLink);
  const fromDest = clean(`${dir(at.destLink)}/${target}`);
  if (leadsOutside(fromDest) || fromDest.startsWith('/')) return false;
  return resolvesInside(root, rule, fromDest) && resolvesInside(root, rule, at.srcLink);
}

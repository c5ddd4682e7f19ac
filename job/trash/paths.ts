/**
 * Names the trash keeps: an entry's root-relative path as the kernel resolves its folder (no
 * links, so a restore puts it back where it really was), and the one error that sends an entry
 * past the trash.
 * @module
 */
import { canonicalRel } from '../journal/journal.ts';
import type { OpContext } from '../runtime/types.ts';
import { errCode } from '../volume/root.ts';

/** `<folder>/<name>` from the root, the folder as the kernel names it; the name as given. */
export function entryPath(ctx: OpContext, parent: { fd: number; name: string }): string {
  const base = canonicalRel(ctx.root.fd, parent.fd);
  if (base === null) throw new Error(`${parent.name}: its folder is not inside the world`);
  return base === '' ? parent.name : `${base}/${parent.name}`;
}

/** A rename refused because source and trash are on different volumes (a mount inside the world). */
export function crossesVolume(e: unknown): boolean {
  return errCode(e) === 'EXDEV';
}

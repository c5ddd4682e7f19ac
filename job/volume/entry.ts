/**
 * The entry an op acts on itself (a delete, a move's source, a change of mode): the path cleaned,
 * the root refused, and the folder holding its last component opened beneath the root, the last
 * component itself not followed. The single ops and the many-file ones open their entries here,
 * so both refuse the same paths with the same answers.
 *
 * @module
 */
import type { Result } from '../../lib/protocol/result.ts';
import { fail, failure } from './failure.ts';
import { clean } from './pathutil.ts';
import type { Parent, WorldRoot } from './root.ts';

export interface OpenedEntry {
  /** The path, cleaned. */
  name: string;
  /** The folder holding it; `parent.name` is never null. Close it when done. */
  parent: Parent & { name: string };
}

/** The entry at `path`, or the Result that refuses it (`rootMessage` for any spelling of the root). */
export function openEntry(root: WorldRoot, path: string, rootMessage: string): OpenedEntry | Result {
  const name = clean(path);
  if (name === '.') return fail('bad_path', rootMessage);
  let parent: Parent;
  try {
    parent = root.parentOf(name, 'lstat');
  } catch (e) {
    return failure(name, e, 'lstat');
  }
  if (parent.name === null) {
    parent.close();
    return fail('bad_path', rootMessage);
  }
  return { name, parent: parent as Parent & { name: string } };
}

export function isOpened(v: OpenedEntry | Result): v is OpenedEntry {
  return 'parent' in v;
}

/**
 * The common front of every file route, in Felis's order: server name and `?path=` (read once,
 * here), the entry gates (the server exists, is stopped, has a world volume), the editor
 * configured, the path present where the route needs one — and the world lock around mutations.
 * The functions add only their own body and answer.
 * @module
 */
import type { Context } from 'hono';
import type { FilesEditor, Target } from '../files/editor.ts';
import type { FileAccess } from '../files/gates.ts';
import type { Op } from '../job-spec/ops.ts';
import type { Deps } from './deps.ts';
import { ApiError, badRequest } from './envelope.ts';
import { queryPath, serverName } from './file-request.ts';

export interface FileCall {
  target: Target;
  path: string;
  editor: FilesEditor;
  /** Ends the wait for a Job's result when the caller goes away. */
  signal: AbortSignal;
  access: FileAccess;
}

export function requireEditor(deps: Deps): FilesEditor {
  if (!deps.editor) throw new ApiError(503, 'files_unavailable', 'the file editor is not configured');
  return deps.editor;
}

/** Listing is the only op whose path may be empty (the root). */
export async function openFileCall(c: Context, deps: Deps, op: Op): Promise<FileCall> {
  const server = serverName(c);
  const path = queryPath(c, false);
  const access: FileAccess = { op, path };
  const target = await deps.gates.enter(server, access);
  const editor = requireEditor(deps);
  if (op !== 'list' && path === '') throw badRequest('the ?path= query parameter is required');
  return { target, path, editor, signal: c.req.raw.signal, access };
}

/** Runs a mutation holding the server's world; the lock is given back before the answer. */
export function underWorldLock<T>(deps: Deps, call: FileCall, fn: () => Promise<T>): Promise<T> {
  return deps.gates.run(call.target.server, call.access, fn);
}

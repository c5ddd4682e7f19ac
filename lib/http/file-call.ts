/**
 * The common front of every file route, in Felis's order: server name and `?path=` (read once,
 * here), the entry gates (the server exists, is stopped, has a world volume), the editor
 * configured, the path present where the route needs one — and the world lock around mutations.
 * The functions add only their own body and answer.
 * @module
 */
import type { Context } from 'hono';
import type { FilesEditor } from '../files/editor.ts';
import type { FileAccess } from '../files/gates.ts';
import type { Target } from '../job-spec/types.ts';
import { NotStoppedError } from '../maintenance/errors.ts';
import { type Op, opHas } from '../protocol/ops.ts';
import type { Deps } from './deps.ts';
import { ApiError } from './envelope.ts';
import { queryPath, rootRefusal, sentQueryPath, serverName } from './file-request.ts';
import { preferWaitSeconds } from './prefer.ts';

export interface FileCall {
  target: Target;
  path: string;
  editor: FilesEditor;
  /** Ends the wait for a Job's result when the caller goes away. */
  signal: AbortSignal;
  access: FileAccess;
  /** `Prefer: wait=N` (at most 30): wait for another file mutation instead of a 409; undefined when not asked. */
  waitSeconds: number | undefined;
  /** Says `Preference-Applied: wait=N` on the answer. */
  preferenceApplied: () => void;
}

export function requireEditor(deps: Deps): FilesEditor {
  if (!deps.editor) throw new ApiError(503, 'files_unavailable', 'the file editor is not configured');
  return deps.editor;
}

/** Only an op whose contract says so (a listing, a search) takes the root (`?path=`, `/`). */
export async function openFileCall(c: Context, deps: Deps, op: Op): Promise<FileCall> {
  const server = serverName(c);
  const path = queryPath(c, false);
  const access: FileAccess = { op, path };
  const target = await enter(deps, server, access);
  const editor = requireEditor(deps);
  if (path === '' && !opHas(op, 'rootPath')) throw rootRefusal(sentQueryPath(c));
  const waitSeconds = preferWaitSeconds(c.req.header('prefer'));
  const preferenceApplied = () => c.header('Preference-Applied', `wait=${waitSeconds}`);
  return { target, path, editor, signal: c.req.raw.signal, access, waitSeconds, preferenceApplied };
}

/**
 * A many-file call (its items in the body, no `?path=`): the same front, entered as the whole
 * world (`.`); the editor names the Job by the items' common folder.
 */
export async function openBatchCall(c: Context, deps: Deps, op: Op): Promise<FileCall> {
  const server = serverName(c);
  const access: FileAccess = { op, path: '.' };
  const target = await enter(deps, server, access);
  const editor = requireEditor(deps);
  const waitSeconds = preferWaitSeconds(c.req.header('prefer'));
  const preferenceApplied = () => c.header('Preference-Applied', `wait=${waitSeconds}`);
  return { target, path: '.', editor, signal: c.req.raw.signal, access, waitSeconds, preferenceApplied };
}

/**
 * A call of an upload session that changes the world (a part, the commit, a cancel): the same
 * front, entered for the upload op with no `?path=` (the session holds its file's path).
 */
export async function openSessionCall(c: Context, deps: Deps): Promise<FileCall> {
  const server = serverName(c);
  const access: FileAccess = { op: 'upload', path: '' };
  const target = await enter(deps, server, access);
  const editor = requireEditor(deps);
  const waitSeconds = preferWaitSeconds(c.req.header('prefer'));
  const preferenceApplied = () => c.header('Preference-Applied', `wait=${waitSeconds}`);
  return { target, path: '', editor, signal: c.req.raw.signal, access, waitSeconds, preferenceApplied };
}

/**
 * A signed upload URL's call: no bearer and no `?path=`; the server and the path are the ticket's.
 * The same gates as an upload's; no `Prefer: wait` (a browser's form cannot send it).
 */
export async function openSignedCall(c: Context, deps: Deps, server: string, path: string): Promise<FileCall> {
  const access: FileAccess = { op: 'upload', path };
  const target = await enter(deps, server, access);
  const editor = requireEditor(deps);
  return { target, path, editor, signal: c.req.raw.signal, access, waitSeconds: undefined, preferenceApplied: () => {} };
}

/** The entry gates; a server found running also ends the edit session this instance knows of. */
async function enter(deps: Deps, server: string, access: FileAccess): Promise<Target> {
  try {
    return await deps.gates.enter(server, access);
  } catch (err) {
    // Not awaited: the refusal is the answer, and a Pod slow to hear the end must not delay it.
    if (err instanceof NotStoppedError) void deps.editor?.serverNotStopped(server);
    throw err;
  }
}

/**
 * Runs a mutation holding the server's world; the lock is given back before the answer. Asked to
 * (`Prefer: wait=N`), it waits up to N s for another file mutation to end instead of a 409.
 */
export function underWorldLock<T>(deps: Deps, call: FileCall, fn: () => Promise<T>): Promise<T> {
  const entered = call.target;
  // The caller going away ends a wait for its turn (nothing was changed yet), never a change begun.
  if (call.waitSeconds === undefined) return deps.gates.run(call.target.server, call.access, fn, { entered, signal: call.signal });
  return deps.gates.run(call.target.server, call.access, fn, { waitMs: call.waitSeconds * 1000, signal: call.signal, applied: call.preferenceApplied, entered });
}

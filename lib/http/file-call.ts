/**
 * The common front of every file route, in Felis's order (felis-behaviour §8.2): server name,
 * entry gates (the server exists, is stopped, has a world volume), the editor configured, then
 * `?path=` — and the world lock around mutations. The functions add only their own body and answer.
 * @module
 */
import type { Context } from 'hono';
import type { FilesEditor, Target } from '../files/editor.ts';
import { underLock, type GateRequest } from '../files/gates.ts';
import type { Deps } from './deps.ts';
import { requireEditor } from './deps.ts';
import { queryPath, serverName } from './file-request.ts';

export interface FileCall {
  target: Target;
  path: string;
  editor: FilesEditor;
  /** Ends the wait for a Job's result when the caller goes away. */
  signal: AbortSignal;
  gate: GateRequest;
}

export async function openFileCall(c: Context, deps: Deps, route: GateRequest['route'], pathRequired: boolean): Promise<FileCall> {
  const server = serverName(c);
  const rawPath = c.req.query('path') ?? '';
  const gate: GateRequest = { route, method: c.req.method, path: rawPath };
  const target = await deps.gates.enter(server, gate);
  const editor = requireEditor(deps);
  const path = queryPath(c, pathRequired);
  return { target, path, editor, signal: c.req.raw.signal, gate };
}

/** Runs a mutation under the world lock; a failed release is logged, never the caller's problem. */
export function underWorldLock<T>(deps: Deps, call: FileCall, fn: () => Promise<T>): Promise<T> {
  return underLock(deps.gates, call.target.server, call.gate, fn, (err) =>
    deps.logger.warn({ err, server: call.target.server }, 'world lock release failed; it lapses after its grace period'),
  );
}

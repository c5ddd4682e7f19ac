/**
 * Many files in one call, each call one Job whatever its count: `POST …/files/delete` `{paths}`,
 * `POST …/files/move` `{moves:[{from, to}]}`, `POST …/files/chmod` `{files:[{path, mode}]}`, each
 * under the world lock as a single delete is. Every item is checked before anything changes (here
 * what no file can be, then by the Job); the first bad one is answered with its `path`, and nothing
 * changed. Audited as the single ops are (`file.delete`, `file.move`, `file.chmod`), with the items
 * done.
 * @module
 */
import type { Context } from 'hono';
import { audit } from '../../lib/http/audit.ts';
import type { Deps } from '../../lib/http/deps.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openBatchCall, underWorldLock } from '../../lib/http/file-call.ts';
import { checkItemPath } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { BatchTooLargeError } from '../../lib/job-spec/render.ts';
import { type Batch, fitsOneJob } from '../../lib/protocol/batch-env.ts';
import type { BatchOp } from '../../lib/protocol/ops.ts';

/**
 * The batch with every item's path by the one path rule (a move's `to`, which the call creates,
 * held to the name rule's characters too); the first refused item is answered, naming it.
 */
function inWorld(b: Batch): Batch {
  if ('paths' in b) return { ...b, paths: b.paths.map((p) => checkItemPath(p)) };
  if ('moves' in b) return { ...b, moves: b.moves.map((m) => ({ ...m, from: checkItemPath(m.from), to: checkItemPath(m.to, true) })) };
  return { ...b, files: b.files.map((x) => ({ ...x, path: checkItemPath(x.path) })) };
}

async function runBatch(c: Context, deps: Deps, op: BatchOp, action: string, read: () => Promise<Batch>, done: (b: Batch, done: Set<string>) => unknown[]): Promise<Response> {
  const f = await openBatchCall(c, deps, op);
  const batch = inWorld(await read());
  if (!fitsOneJob(batch)) throw new BatchTooLargeError();
  const out = await underWorldLock(deps, f, () => f.editor.batch(f.target, op, batch, f.signal));
  const key = op === 'delete-many' ? 'paths' : op === 'move-many' ? 'moves' : 'files';
  // A many-file delete puts what it removed in the undo trash as one record: its id, to undo it.
  const trash = op === 'delete-many' && out.trashId ? { trash_id: out.trashId } : {};
  if (out.done.length > 0) audit(deps.logger, c.get('requestId'), action, f.target.server, '', { [key]: done(batch, new Set(out.done)), ...trash });
  return sendJson(c, 200, { done: out.done, failed: out.failed, ...trash });
}

export const filesBatch = defineFunction('files-batch', (deps) => ({
  'files.delete_many': (c, input) => runBatch(c, deps, 'delete-many', 'file.delete', input.body, (b, d) => ('paths' in b ? b.paths.filter((p) => d.has(p)) : [])),
  'files.move': (c, input) => runBatch(c, deps, 'move-many', 'file.move', input.body, (b, d) => ('moves' in b ? b.moves.filter((m) => d.has(m.from)) : [])),
  'files.chmod': (c, input) => runBatch(c, deps, 'chmod-many', 'file.chmod', input.body, (b, d) => ('files' in b ? b.files.filter((x) => d.has(x.path)) : [])),
}));

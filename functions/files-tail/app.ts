/**
 * `GET /api/v1/servers/:name/files/tail?path=&lines=` — the last lines of a file (a log), read
 * backwards from its end with bounded bytes (job/last-lines.ts). A read: no lock, no audit, a
 * read-only one-shot Job; it also answers while the server runs, and says so (`world_state`).
 */
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall } from '../../lib/http/file-call.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { decodeTail } from './result.ts';

export const filesTail = defineFunction('files-tail', (deps) => ({
  'files.tail': async (c, input) => {
    const f = await openFileCall(c, deps, 'tail');
    const { lines } = input.query();
    const t = decodeTail(await f.editor.run(f.target, 'tail', f.path, { ...(lines !== undefined ? { lines: Number(lines) } : {}) }, f.signal));
    return sendJson(c, 200, { ...t, world_state: f.target.worldState ?? 'stopped' });
  },
}));

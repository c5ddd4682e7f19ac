/**
 * `GET /api/v1/servers/:name/files/usage?path=&depth=&top=` — what a folder holds on disk: its
 * totals, its entries (to `depth`) and its largest files, largest first (job/usage-walk.ts). A
 * read: no lock, no audit, a read-only one-shot Job; it also answers while the server runs, and
 * says so (`world_state`).
 */
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall } from '../../lib/http/file-call.ts';
import { serverName } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { decodeUsage } from './result.ts';

export const filesUsage = defineFunction('files-usage', (deps) => ({
  'files.usage': async (c, input) => {
    serverName(c); // a bad name is bad_name before a bad query
    const { depth, top } = input.query();
    const f = await openFileCall(c, deps, 'usage');
    const u = decodeUsage(await f.editor.run(f.target, 'usage', f.path, { depth, top }, f.signal));
    return sendJson(c, 200, { ...u, world_state: f.target.worldState ?? 'stopped' });
  },
}));

/**
 * `GET /api/v1/servers/:name/files/usage?path=&depth=&top=` — what a folder holds on disk: its
 * totals, its entries (to `depth`) and its largest files, largest first (job/usage-walk.ts). A
 * read: no lock, no audit; it also answers while the server runs, and says so (`world_state`).
 *
 * A browse Pod already serving the world answers it (none is started for it): it keeps its last
 * answers and gives one again while the folders below the path are unchanged, for at most 10 s
 * (job/usage.ts). Otherwise, or when the Pod's shorter walk was cut short (`truncated`), a
 * read-only one-shot Job walks, with its longer budget. Both answer the same shape.
 */
import { sendJson } from '../../lib/http/envelope.ts';
import type { FileCall } from '../../lib/http/file-call.ts';
import { serverName } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { openViaSession } from '../../lib/http/via-session.ts';
import type { OpQuery } from '../../lib/protocol/op-query.ts';
import { decodeUsage, type Usage } from './result.ts';

export const filesUsage = defineFunction('files-usage', (deps) => ({
  'files.usage': async (c, input) => {
    serverName(c); // a bad name is bad_name before a bad query
    const { depth, top } = input.query();
    const query: OpQuery = { ...(depth !== undefined ? { depth } : {}), ...(top !== undefined ? { top } : {}) };
    const oneShot = async (f: FileCall): Promise<Usage> => decodeUsage(await f.editor.run(f.target, 'usage', f.path, { depth, top }, f.signal));
    let warm = false;
    const fromPod = (r: Parameters<typeof decodeUsage>[0]) => {
      warm = true;
      return decodeUsage(r);
    };
    const { call: f, result } = await openViaSession(c, deps, 'usage', fromPod, oneShot, query, { start: false });
    const u = warm && result.truncated ? await oneShot(f) : result;
    return sendJson(c, 200, { ...u, world_state: f.target.worldState ?? 'stopped' });
  },
}));

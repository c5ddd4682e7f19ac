/**
 * `GET /api/v1/servers/:name/files?path=&limit=&after=&q=` — one folder's entries. No lock.
 * Without `limit`, `after` or `q` it is the original listing (directory order, all of at most
 * 2000); with any of them a page in byte order of name, with `next` when there are more. A folder
 * of more than 2000 answers the paged form's first page of 2000 instead, with its `next`: a cut in
 * directory order has no place the caller could continue from. It also answers while the server
 * runs, and says so (`world_state`).
 */

import { sendJson } from '../../lib/http/envelope.ts';
import { serverName } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { openViaSession, viaSessionOr } from '../../lib/http/via-session.ts';
import { type OpQuery, PAGE_DEFAULT_ENTRIES, PLAIN_LIST_ENTRIES } from '../../lib/protocol/op-query.ts';
import { decodeList } from './result.ts';

export const filesList = defineFunction('files-list', (deps) => ({
  'files.list': async (c, input) => {
    serverName(c); // a bad name is bad_name before a bad query
    const { limit, after, q } = input.query();
    const paged = limit !== undefined || after !== undefined || q !== undefined;
    // The Job and the browse Pod are always told the page size, so both page alike; an empty
    // after or q is no bound and no filter, so it is not sent.
    const query: OpQuery | undefined = paged ? { limit: limit ?? PAGE_DEFAULT_ENTRIES, ...(after ? { after } : {}), ...(q ? { q } : {}) } : undefined;
    // A browse session answers as the one-shot Job would, only sooner; without one, the Job runs.
    const { call: f, result: plain } = await openViaSession(c, deps, 'list', decodeList, (f) => f.editor.list(f.target, f.path, f.signal, query), query);
    // A plain listing cut short: the paged form's first page of as many entries, which has a `next`
    // (one more call, to the same browse Pod or Job kind, only for a folder this big).
    const first: OpQuery = { limit: PLAIN_LIST_ENTRIES };
    const cut = !paged && plain.truncated;
    // Should that call fail (a Job image that does not page: Felis's own), the plain answer stands.
    const l = cut
      ? await viaSessionOr(deps.browse, f, 'list', decodeList, () => f.editor.list(f.target, f.path, f.signal, first), undefined, first).catch((err: unknown) => {
          deps.logger.warn({ request_id: c.get('requestId'), err: String(err) }, 'the first page of a cut listing failed; answering the plain listing');
          return plain;
        })
      : plain;
    // The next page starts after this one's last name; a page is never empty while there are more.
    const next = (paged || l !== plain) && l.truncated && l.entries.length > 0 ? { next: l.entries.at(-1)!.name } : {};
    // free_bytes: what a write can use, the free space plus the undo trash (a mutation takes the
    // trash's bytes back when it needs room); 0 on a full volume with an empty trash, null when the
    // Job could not tell.
    const trashBytes = l.trashBytes ?? 0;
    // world_state: `running` when the game may be saving while the folder was read (a read beside it).
    return sendJson(c, 200, {
      path: f.path,
      entries: l.entries,
      truncated: l.truncated,
      ...next,
      free_bytes: l.free < 0 ? null : l.free + trashBytes,
      trash_bytes: trashBytes,
      world_state: f.target.worldState ?? 'stopped',
    });
  },
}));

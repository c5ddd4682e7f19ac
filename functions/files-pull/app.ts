/**
 * `POST /api/v1/servers/:name/files/pull` body `{url, path, name?}` — fetch a URL into the existing
 * folder `path` in the background, as `name` or the name the answer or the URL suggests. The URL's
 * shape is checked here (http or https, no credentials); the SSRF guard itself runs in the pull
 * Job, before each connection (job/pull/). The world is held only around the Job's creation (at
 * most MAX_PULLS_PER_SERVER download at once): the Job then downloads into a staging of its own
 * holding nothing, and the settle pass places the file under the world's line once it ends
 * (docs/pulls.md). Answers 202 `{op}`: follow it in `GET .../files/ops`.
 *
 * `DELETE /api/v1/servers/:name/files/pull/:op` — cancel a running pull through its Pod (the
 * functions hold no `jobs delete`); 202 `{op, status:"cancelling"}`; the op then ends
 * `pull_cancelled` in the ops listing, its working file removed.
 */
import type { Context } from 'hono';
import { DomainError } from '../../lib/errors.ts';
import { BadNameError, checkNameField } from '../../lib/files/name-field.ts';
import { audit } from '../../lib/http/audit.ts';
import { sendOpAccepted } from '../../lib/http/op-accepted.ts';

const badRequest = (message: string) => new DomainError('bad_request', 'invalid', message);

import type { Deps } from '../../lib/http/deps.ts';
import { type FileCall, requireEditor, underWorldLock } from '../../lib/http/file-call.ts';
import { checkPath, serverName } from '../../lib/http/file-request.ts';
import { preferWaitSeconds } from '../../lib/http/prefer.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { ServerNotFoundError } from '../../lib/maintenance/errors.ts';

/** The longest URL a pull takes: longer ones are not links anyone pastes. */
export const MAX_URL_LENGTH = 4096;

/** The URL's shape, before any Job: the guard in the Job judges where it leads. */
export function checkPullUrl(raw: string): URL {
  if (raw.length > MAX_URL_LENGTH) throw badRequest(`url: at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest('url: not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest('url: only http and https URLs can be pulled');
  if (url.username !== '' || url.password !== '') throw badRequest('url: a URL with credentials (user:password@) cannot be pulled');
  return url;
}

/**
 * `name`: one new file's name by the name rule (400 bad_name), and no backslash either, which the
 * Job refuses in a name a server suggests (a Windows path's separator).
 */
export function checkPullName(name: string): string {
  checkNameField('the name', name);
  if (name.includes('\\')) throw new BadNameError('the name must be one name, without a backslash; leave it out to take the name the answer or the URL suggests');
  return name;
}

async function knownServer(c: Context, deps: Deps): Promise<string> {
  const server = serverName(c);
  if (!(await deps.servers.getServer(deps.lock.namespace, server))) throw new ServerNotFoundError(server);
  return server;
}

export const filesPull = defineFunction('files-pull', (deps) => ({
  'files.pull': async (c, input) => {
    const server = serverName(c);
    const body = await input.body();
    const url = checkPullUrl(body.url);
    // '' and '/' are the world's root (the one path rule); otherwise a folder inside it.
    const path = checkPath(body.path).replace(/\/+$/, '');
    if (body.name !== undefined) checkPullName(body.name);
    const access = { op: 'pull' as const, path: path === '' ? '.' : path };
    const target = await deps.gates.enter(server, access);
    const editor = requireEditor(deps);
    const waitSeconds = preferWaitSeconds(c.req.header('prefer'));
    const f: FileCall = { target, path, editor, signal: c.req.raw.signal, access, waitSeconds, preferenceApplied: () => c.header('Preference-Applied', `wait=${waitSeconds}`) };
    const req = { op: 'pull' as const, path, url: url.href, ...(body.name !== undefined ? { to: body.name } : {}) };
    // A redelivered event answers the op its first delivery started (found by its event label).
    const earlier = await editor.earlierOp(target.server, req);
    if (earlier) return sendOpAccepted(c, target.server, earlier.id, { op: earlier });
    const op = await underWorldLock(deps, f, () => editor.start(target, req));
    // The URL's origin only: its path, query and any userinfo may carry tokens.
    audit(deps.logger, c.get('requestId'), 'file.pull', target.server, path, { origin: url.origin, ...(body.name !== undefined ? { name: body.name } : {}), op: op.id });
    return sendOpAccepted(c, target.server, op.id, { op });
  },
  'files.pull.cancel': async (c) => {
    const server = await knownServer(c, deps);
    const editor = requireEditor(deps);
    const op = c.req.param('op') ?? '';
    await editor.cancelPull(server, op, c.req.raw.signal);
    audit(deps.logger, c.get('requestId'), 'file.pull.cancel', server, '', { op });
    return sendOpAccepted(c, server, op, { op, status: 'cancelling' });
  },
}));

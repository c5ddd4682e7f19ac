/**
 * `GET /api/v1/servers/:name/files/tail?path=&lines=` — the last lines of a file (a log), read
 * backwards from its end with bounded bytes (job/last-lines.ts). A read: no lock, no audit, a
 * read-only one-shot Job; it also answers while the server runs, and says so (`world_state`).
 *
 * With `follow=true` the answer is an event stream (lib/http/follow-events.ts) relayed from a
 * follow Job's Pod (lib/files/log-follow.ts): the last `lines` lines, then each appended one, for
 * up to ten minutes; `Last-Event-ID` (or `from=`) resumes after an event instead. The caller
 * hanging up ends the Job; so does this instance stopping (a last `end` event says `shutdown`).
 */
import { DomainError } from '../../lib/errors.ts';
import { currentEvent } from '../../lib/events/scope.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall } from '../../lib/http/file-call.ts';
import { followResponse } from '../../lib/http/follow-events.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { FOLLOW_EVENT_ID, FOLLOW_LIFETIME_SECONDS } from './op.ts';
import { decodeTail } from './result.ts';

/** How much before the request's ten minutes a follow ends itself, so that its end event goes out. */
const END_MARGIN_MS = 5_000;

export const filesTail = defineFunction('files-tail', (deps) => ({
  'files.tail': async (c, input) => {
    const began = performance.now();
    const f = await openFileCall(c, deps, 'tail');
    const { lines, follow, from } = input.query();
    if (follow === 'true') {
      // An event's answer is one reply to its sender, not a stream for minutes.
      if (currentEvent()) throw new DomainError('event_data_invalid', 'invalid', 'a CloudEvent cannot follow a log: follow=true answers an event stream, for an HTTP caller');
      const lastEventId = c.req.header('last-event-id');
      if (from === undefined && lastEventId !== undefined && !FOLLOW_EVENT_ID.test(lastEventId))
        throw new DomainError('bad_request', 'invalid', 'the Last-Event-ID header must be an event id of a follow (<inode>:<offset>)');
      const resume = from ?? lastEventId;
      // The stream outlives nothing of the request but its caller: hanging up ends the Job's answer.
      const hangUp = new AbortController();
      const signal = AbortSignal.any([f.signal, hangUp.signal]);
      const { job, response } = await f.editor.follow(
        f.target,
        f.path,
        { ...(lines !== undefined && resume === undefined ? { lines: Number(lines) } : {}), ...(resume !== undefined ? { from: resume } : {}) },
        signal,
      );
      deps.logger.info({ request_id: c.get('requestId'), server: f.target.server, path: f.path, job }, 'log follow streaming');
      // Ten minutes from the request's start (Knative counts from there), a little before, so the end event is sent.
      const lifetimeMs = FOLLOW_LIFETIME_SECONDS * 1000 - END_MARGIN_MS - (performance.now() - began);
      return followResponse(response, { worldState: f.target.worldState ?? 'stopped', requestId: c.get('requestId'), hangUp: () => hangUp.abort(), lifetimeMs });
    }
    const t = decodeTail(await f.editor.run(f.target, 'tail', f.path, { ...(lines !== undefined ? { lines: Number(lines) } : {}) }, f.signal));
    return sendJson(c, 200, { ...t, world_state: f.target.worldState ?? 'stopped' });
  },
}));

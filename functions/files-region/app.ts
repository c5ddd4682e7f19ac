/**
 * `GET /api/v1/servers/:name/files/region?path=<world>/region/r.X.Z.mca` — one region file's chunk
 * table (the Job reads it: job/region.ts); a read: no lock, no audit, it answers while the server
 * runs and says so.
 *
 * `POST /api/v1/servers/:name/files/region/prune` body `{path, inhabited_below_ticks, dry_run?}` —
 * removes the chunks inhabited for less than the bound from a world's region files (and the same
 * chunks from entities/ and poi/), in the background (job/prune.ts): refused while the server
 * runs, the world lock held around the Job's creation, then the Job holds the world; audited as
 * `file.region_prune`. A dry run runs the plan alone in a read-only Job and answers it at once
 * (200), under the same gates (a running game may be rewriting the files it would read).
 */
import { DomainError } from '../../lib/errors.ts';
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { type FileCall, openFileCall, requireEditor, underWorldLock } from '../../lib/http/file-call.ts';
import { checkPath, serverName } from '../../lib/http/file-request.ts';
import { sendOpAccepted } from '../../lib/http/op-accepted.ts';
import { preferWaitSeconds } from '../../lib/http/prefer.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { BELOW } from './op.ts';
import { decodePruneReport, decodeRegionReport, regionInvalid } from './result.ts';

const LONG_MAX = 2n ** 63n - 1n;

/** The bound as the Job's decimal: a non-negative integer (a number, or a decimal string for what a number cannot hold). */
export function belowOf(v: number | string): string {
  const bad = () => new DomainError('bad_request', 'invalid', `inhabited_below_ticks: a whole number of ticks from 0 to ${LONG_MAX} is required, not ${JSON.stringify(v).slice(0, 40)}`);
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) throw bad();
    return String(v);
  }
  if (!BELOW.test(v) || BigInt(v) > LONG_MAX) throw bad();
  return v;
}

function reportOf(r: Result) {
  const invalid = regionInvalid(r);
  if (invalid !== undefined) throw new DomainError('region_invalid', 'invalid', invalid);
  return decodeRegionReport(r);
}

export const filesRegion = defineFunction('files-region', (deps) => ({
  'files.region': async (c) => {
    serverName(c);
    const f = await openFileCall(c, deps, 'region');
    const r = reportOf(await f.editor.run(f.target, 'region', f.path, {}, f.signal));
    return sendJson(c, 200, { path: r.path, chunks: r.chunks, sectors_used: r.sectors_used, sectors_free: r.sectors_free, world_state: f.target.worldState ?? 'stopped' });
  },
  'files.region.prune': async (c, input) => {
    const server = serverName(c);
    const body = await input.body();
    // '' and '/' are the world's root (the one path rule): a volume that is itself a world.
    const path = checkPath(body.path).replace(/\/+$/, '');
    const below = belowOf(body.inhabited_below_ticks);
    // Both ask for a stopped server: a running game may be rewriting the files the plan reads.
    const access = { op: 'region-prune' as const, path: path === '' ? '.' : path };
    const target = await deps.gates.enter(server, access);
    const editor = requireEditor(deps);
    if (body.dry_run === true) {
      const p = decodePruneReport(await editor.run(target, 'region-plan', path, { below }, c.req.raw.signal));
      return sendJson(c, 200, { dry_run: true, ...p });
    }
    const waitSeconds = preferWaitSeconds(c.req.header('prefer'));
    const f: FileCall = { target, path, editor, signal: c.req.raw.signal, access, waitSeconds, preferenceApplied: () => c.header('Preference-Applied', `wait=${waitSeconds}`) };
    const req = { op: 'region-prune' as const, path, fields: { below } };
    // A redelivered event answers the op its first delivery started, which now holds the world.
    const earlier = await editor.earlierOp(target.server, req);
    if (earlier) return sendOpAccepted(c, target.server, earlier.id, { op: earlier });
    const op = await underWorldLock(deps, f, () => editor.start(target, req));
    audit(deps.logger, c.get('requestId'), 'file.region_prune', target.server, path, { inhabited_below_ticks: below, op: op.id });
    return sendOpAccepted(c, target.server, op.id, { op });
  },
}));

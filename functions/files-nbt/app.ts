/**
 * `GET /api/v1/servers/:name/files/nbt?path=` — one NBT file as typed JSON (the Job decodes it:
 * job/nbt.ts); a read: no lock, no audit, it answers while the server runs and says so.
 * `PUT` of the same path — the document written back: encoded here (a bad tag is 400 nbt_invalid
 * naming it, before any Job), then, holding the world, the file read again (its digest must still
 * be `expect_sha256`); when the encoding is the file's own NBT in its own compression nothing is
 * written, so an unchanged document keeps the very bytes; else the compressed bytes go through
 * the write op (atomic, the old file to the undo trash, the content carried as a write's is).
 */
import { createHash } from 'node:crypto';
import { DomainError } from '../../lib/errors.ts';
import { currentEvent, withoutEvent } from '../../lib/events/scope.ts';
import { audit } from '../../lib/http/audit.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import { openFileCall, underWorldLock } from '../../lib/http/file-call.ts';
import { serverName } from '../../lib/http/file-request.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { MAX_WRITE_BYTES } from '../../lib/protocol/limits.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { compressNbt, encodeNbt, NbtBodyError } from './nbt-encode.ts';
import { decodeNbtReport, nbtInvalid } from './result.ts';

const HEX64 = /^[0-9a-f]{64}$/;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The report, or the Job's refusal as the caller's error (400 nbt_invalid for a file that is no NBT). */
function reportOf(r: Result) {
  const invalid = nbtInvalid(r);
  if (invalid !== undefined) throw new DomainError('nbt_invalid', 'invalid', invalid);
  return decodeNbtReport(r);
}

export const filesNbt = defineFunction('files-nbt', (deps) => ({
  'files.nbt': async (c) => {
    serverName(c);
    const f = await openFileCall(c, deps, 'nbt');
    const n = reportOf(await f.editor.run(f.target, 'nbt', f.path, {}, f.signal));
    return sendJson(c, 200, { path: n.path, compression: n.compression, sha256: n.sha256, root: n.root, world_state: f.target.worldState ?? 'stopped' });
  },
  'files.nbt.write': async (c, input) => {
    const f = await openFileCall(c, deps, 'write');
    const body = await input.body();
    if (!HEX64.test(body.expect_sha256)) throw new DomainError('bad_request', 'invalid', 'expect_sha256 must be 64 lowercase hex characters');
    let payload: Buffer;
    try {
      payload = encodeNbt(body.root);
    } catch (e) {
      if (e instanceof NbtBodyError) throw new DomainError('nbt_invalid', 'invalid', `the body's ${e.message}`);
      throw e;
    }
    const event = currentEvent() !== undefined;
    const done = await underWorldLock(deps, f, async () => {
      // Serving an event, the write's Job alone carries its label: a redelivery is answered from it.
      const now = reportOf(await withoutEvent(() => f.editor.run(f.target, 'nbt', f.path, {}, f.signal)));
      // A redelivered event whose first delivery wrote finds the file changed: the write below
      // answers from that delivery's Job (or its Job refuses the stale digest itself, 409).
      if (now.sha256 !== body.expect_sha256 && !event) {
        throw new DomainError('file_changed', 'conflict', `${f.path} has changed since it was read (its sha256 is now ${now.sha256}); read it again`);
      }
      const compression = body.compression ?? now.compression;
      if (compression === now.compression && sha256(payload) === now.payload_sha256) return { status: 'unchanged' as const, sha256: now.sha256 };
      const bytes = compressNbt(payload, compression);
      if (bytes.length > MAX_WRITE_BYTES) throw new DomainError('too_large', 'too_large', `${f.path} would be ${bytes.length} bytes; an NBT write is at most ${MAX_WRITE_BYTES}`);
      const written = await f.editor.write(f.target, f.path, bytes, { sha256: sha256(bytes), expectSha256: body.expect_sha256 }, f.signal);
      return { status: 'written' as const, sha256: written };
    });
    if (done.status === 'written') audit(deps.logger, c.get('requestId'), 'file.nbt_write', f.target.server, f.path);
    return sendJson(c, 200, { path: f.path, status: done.status, sha256: done.sha256 });
  },
}));

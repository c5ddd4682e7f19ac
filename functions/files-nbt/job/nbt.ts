/**
 * nbt(path): one NBT file as typed JSON (nbt-decode.ts), with its compression and the digests a
 * write needs, as the report result.ts decodes. Opened as read opens a file: links inside the
 * world followed, the withheld file refused by name, identity and content, never parsed.
 * @module
 */
import fs from 'node:fs';
import { openReadable } from '../../../job/op-kit/open-readable.ts';
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { withheldRule } from '../../../job/runtime/withheld.ts';
import { fail, failure } from '../../../job/volume/failure.ts';
import { propertiesIdentity, secretMessage } from '../../../job/volume/guard.ts';
import { readCapped, sha256Hex } from '../../../job/volume/read-capped.ts';
import { identityOf, sameIdentity } from '../../../job/volume/root.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import { NBT_FILE_MAX_BYTES, NBT_JSON_MAX_CHARS, type NbtReport } from '../op.ts';
import { compressionOf, decodeNbt, NbtRefusal, payloadOf } from './nbt-decode.ts';

/** Reads and decodes; a file that is no NBT (or too much of it) is its refusal, naming the caller's path. */
export function nbtReport(name: string, raw: Buffer): NbtReport | Result {
  try {
    const compression = compressionOf(raw);
    const payload = payloadOf(raw, compression);
    const root = decodeNbt(payload);
    return { path: name, compression, sha256: sha256Hex(raw), payload_sha256: sha256Hex(payload), root };
  } catch (e) {
    if (!(e instanceof NbtRefusal)) throw e;
    return { code: e.code, error: `${name} ${e.code === 'too_large' ? 'is too large to answer as JSON' : 'is not an NBT file this route reads'}: ${e.message}` };
  }
}

export function nbt(ctx: OpContext, req: OpRequestOf<'nbt'>): Result {
  const name = req.path;
  const opened = openReadable(ctx, name);
  if (!('fd' in opened)) return opened;
  const { fd, st, verdict } = opened;
  try {
    // The root server.properties holds secrets a read redacts; it is no NBT, and never parsed.
    if (sameIdentity(identityOf(st), propertiesIdentity(ctx.root))) return { code: 'nbt_invalid', error: `${name} is not an NBT file this route reads` };
    if (st.size > BigInt(NBT_FILE_MAX_BYTES)) return fail('too_large', `${name} is ${st.size} bytes; an NBT file is read up to ${NBT_FILE_MAX_BYTES}`);
    let raw: Buffer;
    try {
      raw = verdict.bytes ?? readCapped(fd, NBT_FILE_MAX_BYTES + 1);
    } catch (e) {
      return failure(name, e, 'read');
    }
    if (raw.length > NBT_FILE_MAX_BYTES) return fail('too_large', `${name} is more than ${NBT_FILE_MAX_BYTES} bytes; an NBT file is read up to ${NBT_FILE_MAX_BYTES}`);
    if (!verdict.bytes && withheldRule(ctx.root).isContent(raw)) return fail('bad_path', secretMessage(name));
    const report = nbtReport(name, raw);
    if (!('root' in report)) return report;
    // The least-size count of the decoder bounds the heap; the JSON itself is what the line carries.
    if (JSON.stringify(report.root).length > NBT_JSON_MAX_CHARS) return fail('too_large', `${name} is too large to answer as JSON: more than ${NBT_JSON_MAX_CHARS} characters`);
    return { report };
  } finally {
    fs.closeSync(fd);
  }
}

export const runs = { nbt };

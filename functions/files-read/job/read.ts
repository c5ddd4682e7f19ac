/**
 * read(path): the bytes of one regular file of at most MAX_READ_BYTES, with the forwarding secret
 * withheld and the root server.properties redacted (rcon password, forwarding secrets). With
 * `decompress`, a gzip file's inflated text instead, up to MAX_READ_BYTES (inflate-capped.ts), its
 * digests both of that text: the bytes on disk are not what is sent, and hashing them all would
 * read a file of any size.
 *
 * @module
 */

import fs from 'node:fs';
import { openReadable } from '../../../job/op-kit/open-readable.ts';
import { MAX_READ_BYTES, type OpContext, type OpRequestOf } from '../../../job/runtime/types.ts';
import { withheldRule } from '../../../job/runtime/withheld.ts';
import { fail, failure } from '../../../job/volume/failure.ts';
import { propertiesIdentity, redactProperties, secretMessage } from '../../../job/volume/guard.ts';
import { readCapped, sha256Hex } from '../../../job/volume/read-capped.ts';
import { identityOf, sameIdentity } from '../../../job/volume/root.ts';
import type { Result } from '../../../lib/protocol/result.ts';
import { inflateCapped } from './inflate-capped.ts';

export function read(ctx: OpContext, req: OpRequestOf<'read'>): Result | Promise<Result> {
  const name = req.path === '' ? '.' : req.path;
  // 1. The secret by name, then by identity (symlinks, directory links and hard links to it) or
  // by content (a link left holding a withheld content after a replace), judged on the very bytes
  // sent; folders and anything but a regular file refused (open-readable.ts).
  const opened = openReadable(ctx, name);
  if (!('fd' in opened)) return opened;
  const { fd, st, verdict } = opened;
  let inflating = false;
  try {
    if (req.decompress) {
      inflating = true; // the fd is the inflation's now, closed when it ends
      return inflated(ctx, name, fd);
    }

    // 2. Size before reading, and the read itself capped.
    if (st.size > BigInt(MAX_READ_BYTES)) {
      return fail('too_large', `${name} is ${st.size} bytes; the editor reads at most ${MAX_READ_BYTES}`);
    }
    let raw: Buffer;
    try {
      raw = verdict.bytes ?? readCapped(fd, MAX_READ_BYTES);
    } catch (e) {
      return failure(name, e, 'read');
    }
    // Grown into a withheld content after the verdict (read again above): judged again.
    if (!verdict.bytes && withheldRule(ctx.root).isContent(raw)) return fail('bad_path', secretMessage(name));

    // 3. Redaction for the root server.properties and anything linked to it.
    const content = sameIdentity(identityOf(st), propertiesIdentity(ctx.root)) ? redactProperties(raw) : raw;

    // 4. Digests of the disk bytes and of the bytes sent.
    return { content: content.toString('base64'), sha256: sha256Hex(raw), content_sha256: sha256Hex(content) };
  } finally {
    if (!inflating) fs.closeSync(fd);
  }
}

/** The decompress read of the open regular file `fd`: its inflated text, judged again as the withheld file's content. */
async function inflated(ctx: OpContext, name: string, fd: number): Promise<Result> {
  try {
    const r = await inflateCapped(fd, MAX_READ_BYTES);
    if ('notGzip' in r) return fail('gzip_invalid', `${name} is not gzip-compressed; read it without decompress=true`);
    if ('damaged' in r) return fail('gzip_invalid', `${name} is damaged gzip data (${r.damaged})`);
    // A gzip of the withheld file's content is that content.
    if (withheldRule(ctx.root).isContent(r.text)) return fail('bad_path', secretMessage(name));
    const digest = sha256Hex(r.text);
    return { content: r.text.toString('base64'), ...(r.truncated ? { truncated: true } : {}), sha256: digest, content_sha256: digest };
  } catch (e) {
    return failure(name, e, 'read');
  } finally {
    fs.closeSync(fd);
  }
}

export const runs = { read };

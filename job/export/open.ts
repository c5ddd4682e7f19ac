/**
 * Opening one download (a file, or a folder to be zipped) under the download rules, before any
 * byte is sent: the path is a file or folder inside the world (never the root, never through a
 * link leading out), it is still the kind the caller asked for, it is not a special file (checked
 * without a blocking open), it is not the forwarding secret (by identity, so no link or hard link
 * reaches it), and the root server.properties (by identity) is sent redacted, or refused when it
 * is too large to redact in memory. A refusal is a Result with its code, as a file op prints.
 *
 * A file is opened once and streamed from that descriptor; the open checks that it is the same
 * regular file that was looked at, so a swap of the path between the look and the open is refused
 * and a swap after it does not change what is sent.
 * @module
 */
import fs from 'node:fs';
import { fileEtag } from '../../lib/protocol/range.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { resolveSource, type Source } from '../archive/pack.ts';
import { MAX_READ_BYTES } from '../runtime/types.ts';
import { withheldRule } from '../runtime/withheld.ts';
import { pathHasWorkingName } from '../runtime/working-files.ts';
import { fail, failure, msg } from '../volume/failure.ts';
import { propertiesIdentity, redactProperties } from '../volume/guard.ts';
import { readCapped } from '../volume/read-capped.ts';
import { identityOf, sameIdentity, type WorldRoot } from '../volume/root.ts';
import { isWorkFolderName } from '../volume/work-folder.ts';

const { O_RDONLY, O_NONBLOCK } = fs.constants;

export type Download =
  /** A regular file: `size` bytes from `fd` (the caller closes it). */
  | { kind: 'file'; name: string; fd: number; size: number; etag: string }
  /** The root server.properties, redacted: sent from memory. */
  | { kind: 'bytes'; name: string; bytes: Buffer }
  /** A folder: zipped as it is walked. */
  | { kind: 'dir'; name: string; source: Source };

export const FILE_TYPE = 'application/octet-stream';
export const ZIP_TYPE = 'application/zip';

export function isRefusal(d: Download | Result): d is Result {
  return !('kind' in d);
}

/** Opens the download of `path` (`dir`: the caller expects a folder), or says why not. */
export function openDownload(root: WorldRoot, path: string, dir: boolean): Download | Result {
  // The editor's working files and an extraction's working folders are not the world's: not there.
  if (pathHasWorkingName(path) || path.split('/').some((c) => isWorkFolderName(c))) return fail('not_found', msg.notExist(path));
  const src = resolveSource(root, path);
  if (!('isDir' in src)) return src;
  if (src.isDir !== dir) {
    return fail('bad_path', src.isDir ? `${src.name} is a folder now; reload and download it as a folder` : `${src.name} is not a folder now; reload and download it as a file`);
  }
  if (src.isDir) return { kind: 'dir', name: src.name, source: src };

  let fd: number;
  try {
    fd = root.openFile(src.name, O_RDONLY | O_NONBLOCK);
  } catch (e) {
    return failure(src.name, e, 'open');
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    // Swapped between the look and the open: what was checked is not what is open.
    const looked = resolveSource(root, src.name);
    if (!st.isFile() || !('isDir' in looked) || looked.isDir || !sameIdentity(identityOf(st), identityOf(root.stat(src.name)))) {
      fs.closeSync(fd);
      return fail('bad_path', `${src.name} changed while it was opened; reload and try again`);
    }
    // The secret by the identity of what is open, whatever the path looked like, or by its
    // content (judged on the bytes then sent from memory).
    const verdict = withheldRule(root).judge(fd, st);
    if (verdict.withheld) {
      fs.closeSync(fd);
      return fail('bad_path', `${src.name} holds the proxy forwarding secret; it is never downloaded`);
    }
    if (sameIdentity(identityOf(st), propertiesIdentity(root))) {
      const raw = readCapped(fd, MAX_READ_BYTES + 1);
      fs.closeSync(fd);
      if (raw.length > MAX_READ_BYTES) return fail('too_large', `${src.name} is over ${MAX_READ_BYTES} bytes and cannot be redacted`);
      return { kind: 'bytes', name: src.name, bytes: redactProperties(raw) };
    }
    if (verdict.bytes) {
      fs.closeSync(fd);
      return { kind: 'bytes', name: src.name, bytes: verdict.bytes };
    }
    return { kind: 'file', name: src.name, fd, size: Number(st.size), etag: fileEtag({ dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs }) };
  } catch (e) {
    fs.closeSync(fd);
    return failure(src.name, e, 'stat');
  }
}

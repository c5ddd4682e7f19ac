/**
 * What an upload request must say before anything is started for it, shared by the single upload
 * (functions/files-upload) and the upload sessions (functions/files-uploads): a path that names a
 * file inside the world, and a declared length.
 * @module
 */
import { DomainError } from '../errors.ts';
import { EDIT_PREFIX, pathNamesWorkingFile, WORK_PREFIX } from '../protocol/working-names.ts';
import { IS_ROOT, pathRefusal, worldPath } from '../protocol/world-path.ts';

/**
 * The path as the Job takes it (the one path rule: a leading `/` is the world folder), which must
 * name a file inside the world (no escape, not the root) that the upload may create: by the name rule.
 */
export function checkLocalPath(sent: string): string {
  const p = worldPath(sent, true);
  if (p.refusal !== undefined) throw new DomainError('bad_path', 'invalid', p.refusal);
  const path = p.path;
  const segs: string[] = [];
  for (const seg of path.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') segs.pop();
    else segs.push(seg);
  }
  if (segs.length === 0) throw new DomainError('bad_path', 'invalid', pathRefusal(sent, IS_ROOT));
  // The ops' own working names are refused by the Job too; by name alone they need no Job.
  if (pathNamesWorkingFile(segs.join('/'))) throw new DomainError('bad_path', 'invalid', pathRefusal(sent, `has a name starting with ${EDIT_PREFIX} or ${WORK_PREFIX}, the editor's working files`));
  return path;
}

/** `Content-Length` as a byte count: 411 when absent (a chunked body), 400 when not a number. */
export function declaredLength(headers: Headers): number {
  const v = headers.get('content-length');
  if (v === null) throw new DomainError('length_required', 'length_required', 'a Content-Length header is required; send the file in one request of known length');
  if (!/^\d{1,16}$/.test(v)) throw new DomainError('bad_request', 'invalid', 'the Content-Length header is not a byte count');
  return Number(v);
}

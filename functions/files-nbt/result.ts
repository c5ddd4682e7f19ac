/**
 * files-nbt's result: the Job's report (Result.report), checked for its shape. Its own refusal,
 * `nbt_invalid` (a code the Job answers for this op alone, so the shared result codes keep no
 * op's), is the handler's to throw (app.ts). Pure; the function's side only (never bundled into
 * the Job program).
 * @module
 */
import { checkResult } from '../../lib/files/result-check.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { NBT_COMPRESSIONS, type NbtReport } from './op.ts';

const HEX64 = /^[0-9a-f]{64}$/;

/** The Job's refusal of a file that is no NBT it reads: its message, else undefined. */
export function nbtInvalid(r: Result): string | undefined {
  return r.code === 'nbt_invalid' ? (r.error ?? 'the file is not an NBT file this route reads') : undefined;
}

/** Throws what any other refusal means (not_found, bad_path, too_large …); a report of another shape is the Job's fault, an error of ours. */
export function decodeNbtReport(r: Result): NbtReport {
  checkResult(r);
  const n = r.report as NbtReport | undefined;
  const ok =
    typeof n === 'object' &&
    n !== null &&
    typeof n.path === 'string' &&
    (NBT_COMPRESSIONS as readonly string[]).includes(n.compression) &&
    HEX64.test(n.sha256) &&
    HEX64.test(n.payload_sha256) &&
    typeof n.root === 'object' &&
    n.root !== null &&
    n.root.type === 'compound' &&
    typeof n.root.name === 'string' &&
    typeof n.root.value === 'object' &&
    n.root.value !== null;
  if (!ok) throw new Error('the nbt Job answered no NBT report');
  return n;
}

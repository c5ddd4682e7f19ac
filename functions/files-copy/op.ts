/**
 * files-copy's op: a file or folder copied; in the background, or synchronously up to `--max-size` bytes.
 * @module
 */
import { type OpFlags, opContract } from '../../lib/protocol/op-contract.ts';

export interface CopyFields {
  /** The new path (`--to`); empty: a free `<name> copy<.ext>` beside the original. */
  to: string;
  /**
   * A synchronous copy (`--max-size`), refused with too_large unless the source is a regular file
   * of at most this many bytes. Absent: any source, in the background.
   */
  maxSize?: number;
}

export const copy = opContract(
  'copy',
  { mutates: true, lostResult: 'atomic', chown: true, async: true, edit: true, heapLimited: true, rerunnable: true },
  {
    encode(p) {
      // Without --to the Job picks a free `<name> copy` beside the source; --max-size makes it a sync copy.
      const a: string[] = [];
      if (p.to) a.push('--to', p.to);
      if (p.maxSize !== undefined && p.maxSize >= 0) a.push('--max-size', String(p.maxSize));
      return a;
    },
    decode: (f: OpFlags): CopyFields => ({ to: f.to, ...(f.maxSize >= 0 ? { maxSize: f.maxSize } : {}) }),
  },
);

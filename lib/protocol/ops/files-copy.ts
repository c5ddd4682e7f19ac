/**
 * files-copy's op: a file or folder copied; in the background, or synchronously up to `--max-size` bytes.
 * @module
 */
import { opContract } from '../op-contract.ts';

export const copy = opContract<'copy', { to: string; maxSize?: number }, { mutates: true; lostResult: 'atomic'; chown: true; async: true; edit: true; heapLimited: true; rerunnable: true }>(
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
    decode: (f) => ({ to: f.to, ...(f.maxSize >= 0 ? { maxSize: f.maxSize } : {}) }),
  },
);

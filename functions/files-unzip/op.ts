/**
 * files-unzip's op: an archive extracted, under a journal (its op id recorded for recovery).
 * @module
 */
import { type OpFlags, opContract } from '../../lib/protocol/op-contract.ts';

export interface UnzipFields {
  /** Existing files may be replaced (`--overwrite`). */
  overwrite: boolean;
  /** The folder to extract into (`--to`); empty: the archive's own. */
  to: string;
}

export const unzip = opContract(
  'unzip',
  { mutates: true, chown: true, async: true, heapLimited: true, journaled: true, rerunnable: true },
  {
    encode(p) {
      const a: string[] = [];
      if (p.overwrite) a.push('--overwrite');
      // Without --to the archive's own folder is the destination, exactly Felis's command line.
      if (p.to) a.push('--to', p.to);
      return a;
    },
    decode: (f: OpFlags): UnzipFields => ({ overwrite: f.overwrite, to: f.to }),
  },
);

/**
 * files-compress's op: a selection packed into one archive (its paths in FELIS_BATCH_*).
 * @module
 */
import { type OpFlags, opContract } from '../../lib/protocol/op-contract.ts';

export interface CompressFields {
  /** The archive's format (`--format`: zip, tar.gz, tar.xz or tar.zst). */
  format: string;
  /** The archive's name in the folder `--path` (`--to`); empty: a dated default. */
  to: string;
}

export const compress = opContract(
  'compress',
  { mutates: true, chown: true, async: true, heapLimited: true, rerunnable: true, items: 'paths' },
  {
    encode(p) {
      // The selection's paths are in the env; the folder is --path, the archive's name --to.
      const a = ['--format', p.format ?? ''];
      if (p.to) a.push('--to', p.to);
      return a;
    },
    decode: (f: OpFlags): CompressFields => ({ format: f.format, to: f.to }),
  },
);

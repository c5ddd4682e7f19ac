/**
 * files-mkdir's op: a folder made; with `--parents` (ours, not Felis's) the missing folders above
 * it first, and a folder already there is no error (mkdir -p).
 * @module
 */
import { type EncodeInput, opContract } from '../../lib/protocol/op-contract.ts';

export interface MkdirFields {
  /** Make the missing folders above the path first; an existing folder at the path is made (`--parents`). */
  parents?: true;
}

export const mkdir = opContract(
  'mkdir',
  { mutates: true, lostResult: 'atomic', chown: true, edit: true, rerunnable: true },
  {
    flags: { parents: { kind: 'bool', usage: 'make the missing folders above --path first, each as mkdir does; an existing folder at --path is no error' } },
    // Without it the command line is Felis's.
    encode: (p: EncodeInput<MkdirFields>) => (p.parents ? ['--parents'] : []),
    decode: (f): MkdirFields => (f.parents ? { parents: true } : {}),
  },
);

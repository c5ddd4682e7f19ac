/**
 * files-zip's op: a file or folder packed into a zip beside it.
 * @module
 */
import { type OpFlags, opContract } from '../../lib/protocol/op-contract.ts';

export interface ZipFields {
  /** The archive's name in the source's folder (`--to`); empty: a free `<name>.zip`. */
  to: string;
}

export const zip = opContract(
  'zip',
  { mutates: true, chown: true, async: true, heapLimited: true, rerunnable: true },
  // Without --to the Job picks a free name next to the source.
  { encode: (p) => (p.to ? ['--to', p.to] : []), decode: (f: OpFlags): ZipFields => ({ to: f.to }) },
);

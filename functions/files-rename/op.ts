/**
 * files-rename's op: one path moved to `--to`. Moving needs only DAC_OVERRIDE.
 * @module
 */
import { type OpFlags, opContract } from '../../lib/protocol/op-contract.ts';

export interface RenameFields {
  /** The destination (`--to`). */
  to: string;
}

export const rename = opContract('rename', { mutates: true, lostResult: 'atomic', edit: true }, { encode: (p) => ['--to', p.to ?? ''], decode: (f: OpFlags): RenameFields => ({ to: f.to }) });

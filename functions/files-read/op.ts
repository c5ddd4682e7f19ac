/**
 * files-read's op: one file's content; with its own flag `--decompress`, a gzip file's text
 * inflated (up to the read limit).
 * @module
 */
import { type EncodeInput, type OpFlags, type OwnFlagValues, opContract } from '../../lib/protocol/op-contract.ts';

const FLAGS = {
  decompress: { kind: 'bool', usage: 'read: inflate a gzip file (the first MAX_READ_BYTES of its text)' },
} as const;
type Flags = OpFlags & OwnFlagValues<typeof FLAGS>;

export interface ReadFields {
  /** Inflate the file (gzip only: its magic decides, not its name); absent or false: its bytes as they are. */
  decompress?: boolean;
}

export const read = opContract(
  'read',
  { serve: true },
  {
    flags: FLAGS,
    // Without it, the command line stays Felis's.
    encode: (f: EncodeInput<ReadFields>) => (f.decompress ? ['--decompress'] : []),
    decode: (f: Flags): ReadFields => (f.decompress ? { decompress: true } : {}),
  },
);

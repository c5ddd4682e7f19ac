/**
 * files-upload's op: a file fetched from its source URL (the single PUT's receiver) and landed.
 * @module
 */
import { type OpFlags, opContract } from '../../lib/protocol/op-contract.ts';

export interface UploadFields {
  /** Where the receiver serves the bytes (`--source-url`). */
  sourceUrl: string;
  /** How many bytes (`--size`); -1 when not said. */
  size: number;
  /** Hex SHA-256 of the bytes (`--sha256`). */
  sha256: string;
  /** An existing file may be replaced (`--overwrite`). */
  overwrite: boolean;
}

export const upload = opContract(
  'upload',
  { mutates: true, chown: true, async: true },
  {
    encode(p) {
      const a = ['--source-url', p.sourceUrl ?? '', '--size', String(p.size ?? -1), '--sha256', p.sha256 ?? ''];
      if (p.overwrite) a.push('--overwrite');
      return a;
    },
    decode: (f: OpFlags): UploadFields => ({ sourceUrl: f.sourceUrl, size: f.size, sha256: f.sha256, overwrite: f.overwrite }),
    // Its token is in the env (FELIS_UPLOAD_TOKEN), which the program checks after the flags.
    refuse: (f) => (f.sourceUrl === '' ? '--source-url is required for upload' : undefined),
  },
);

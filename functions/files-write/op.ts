/**
 * files-write's op: one file's content replaced or created, from the env or streamed to the Pod (`--receive`).
 * @module
 */
import { type OpFlags, opContract } from '../../lib/protocol/op-contract.ts';

export interface WriteFields {
  /** Hex SHA-256 the content must hash to (`--sha256`); checked when non-empty. */
  sha256: string;
  /** Hex SHA-256 the current file must have (`--expect-sha256`); checked when non-empty. */
  expectSha256: string;
  /** Refuse any existing entry at the path (`--create-only`). */
  createOnly: boolean;
}

export const write = opContract(
  'write',
  { mutates: true, lostResult: 'atomic', chown: true, edit: true, rerunnable: true },
  {
    encode(p) {
      const a = ['--sha256', p.sha256 ?? ''];
      if (p.expectSha256) a.push('--expect-sha256', p.expectSha256);
      if (p.createOnly) a.push('--create-only');
      if (p.contentTokenSha256) a.push('--receive');
      return a;
    },
    decode: (f: OpFlags): WriteFields => ({ sha256: f.sha256, expectSha256: f.expectSha256, createOnly: f.createOnly }),
    refuse: (f) => (f.sha256 === '' ? '--sha256 is required for write' : undefined),
  },
);

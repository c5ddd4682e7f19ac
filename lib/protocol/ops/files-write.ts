/**
 * files-write's op: one file's content replaced or created, from the env or streamed to the Pod (`--receive`).
 * @module
 */
import { opContract } from '../op-contract.ts';

export const write = opContract<'write', { sha256: string; expectSha256: string; createOnly: boolean }, { mutates: true; lostResult: 'atomic'; chown: true; edit: true; rerunnable: true }>(
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
    decode: (f) => ({ sha256: f.sha256, expectSha256: f.expectSha256, createOnly: f.createOnly }),
    refuse: (f) => (f.sha256 === '' ? '--sha256 is required for write' : undefined),
  },
);

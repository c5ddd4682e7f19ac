/** files-write's op samples: what its codec must carry to the Job unchanged (OpSamples). @module */
import type { OpSamples } from '../../lib/protocol/ops.ts';

export const samples = {
  write: [
    { sha256: 'a'.repeat(64), expectSha256: '', createOnly: false },
    { sha256: 'a'.repeat(64), expectSha256: 'b'.repeat(64), createOnly: true },
  ],
} satisfies OpSamples;

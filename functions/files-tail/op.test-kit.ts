/** files-tail's op samples: what its codec must carry to the Job unchanged (OpSamples). @module */
import type { OpSamples } from '../../lib/protocol/ops.ts';

export const samples = {
  tail: [{}, { lines: 1 }, { lines: 5000 }, { follow: true }, { lines: 10, follow: true, from: '1234:5678' }],
} satisfies OpSamples;

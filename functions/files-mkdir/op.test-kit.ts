/** files-mkdir's op samples: what its codec must carry to the Job unchanged (OpSamples). @module */
import type { OpSamples } from '../../lib/protocol/ops.ts';

export const samples = {
  mkdir: [{}, { parents: true }],
} satisfies OpSamples;

/** files-usage's op samples: what its codec must carry to the Job unchanged (OpSamples). @module */
import type { OpSamples } from '../../lib/protocol/ops.ts';

export const samples = {
  usage: [{}, { depth: 3 }, { top: 100 }, { depth: 2, top: 1 }],
} satisfies OpSamples;

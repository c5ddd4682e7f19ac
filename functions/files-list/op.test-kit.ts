/** files-list's op samples: what its codec must carry to the Job unchanged (OpSamples). @module */
import type { OpSamples } from '../../lib/protocol/ops.ts';

export const samples = {
  list: [{}, { limit: 5 }, { limit: 1, after: 'b c', q: '-x' }],
} satisfies OpSamples;

/** files-search's op samples: what its codec must carry to the Job unchanged (OpSamples). @module */
import type { OpSamples } from '../../lib/protocol/ops.ts';

export const samples = {
  search: [{}, { q: '*.yml' }, { q: 'x', limit: 10 }],
} satisfies OpSamples;

/** files-search's op samples: what its codec must carry to the Job unchanged (OpSamples). @module */
import type { OpSamples } from '../../lib/protocol/ops.ts';

export const samples = {
  search: [{}, { q: '*.yml' }, { q: 'x', limit: 10 }, { text: 'rcon.password' }, { text: 'Ärger a=b', q: '*.log', limit: 3 }],
} satisfies OpSamples;

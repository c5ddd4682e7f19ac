/** files-copy's op samples: what its codec must carry to the Job unchanged (OpSamples). @module */
import type { OpSamples } from '../../lib/protocol/ops.ts';

export const samples = {
  copy: [{ to: '' }, { to: 'b copy' }, { to: '', maxSize: 0 }, { to: 'c', maxSize: 1 << 26 }],
} satisfies OpSamples;

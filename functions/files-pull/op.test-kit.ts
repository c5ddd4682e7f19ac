/** files-pull's op samples: what its codec must carry to the Job unchanged (OpSamples). @module */
import type { OpSamples } from '../../lib/protocol/ops.ts';

export const samples = {
  pull: [
    { url: 'https://example.com/a.jar', to: '' },
    { url: 'https://example.com/a', to: 'b.jar' },
  ],
  'pull-place': [{ to: 'a.jar', pullOp: 'fedcba9876543210' }],
} satisfies OpSamples;

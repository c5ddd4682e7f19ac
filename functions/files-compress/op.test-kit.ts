/** files-compress's op samples: what its codec must carry to the Job unchanged (OpSamples). @module */
import type { OpSamples } from '../../lib/protocol/ops.ts';

export const samples = {
  compress: [
    { format: 'zip', to: '' },
    { format: 'tar.gz', to: 'x.tar.gz' },
  ],
} satisfies OpSamples;

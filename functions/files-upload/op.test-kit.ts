/** files-upload's op samples: what its codec must carry to the Job unchanged (OpSamples). @module */
import type { OpSamples } from '../../lib/protocol/ops.ts';

export const samples = {
  upload: [
    { sourceUrl: 'http://10.0.0.1:8420/x', size: 12, sha256: 'c'.repeat(64), overwrite: false },
    { sourceUrl: 'http://10.0.0.1:8420/x', size: -1, sha256: '', overwrite: true },
  ],
} satisfies OpSamples;

/** files-region's op samples: what its codec must carry to the Job unchanged (OpSamples). @module */
import type { OpSamples } from '../../lib/protocol/ops.ts';

export const samples = {
  region: [{}],
  'region-plan': [{ below: '0' }, { below: '1200' }, { below: '9223372036854775807' }],
  'region-prune': [{ below: '72000' }],
} satisfies OpSamples;

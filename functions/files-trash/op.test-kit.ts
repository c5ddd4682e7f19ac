/** files-trash's op samples: what its codec must carry to the Job unchanged (OpSamples). @module */
import type { OpSamples } from '../../lib/protocol/ops.ts';

export const samples = {
  'trash-list': [{}, { after: '0123456789abcdef', limit: 20 }],
  'trash-restore': [
    { trashId: '0123456789abcdef', to: '' },
    { trashId: '0123456789abcdef', to: 'back/here' },
  ],
  'trash-purge': [
    { trashId: '0123456789abcdef', all: false },
    { trashId: '', all: true },
  ],
} satisfies OpSamples;

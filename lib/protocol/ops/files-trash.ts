/**
 * files-trash's ops: the undo trash listed, a record restored, records purged (docs/undo.md).
 * @module
 */
import { opContract, queryCodec } from '../op-contract.ts';
import { TRASH_ID } from '../trash-env.ts';

/** The trash is readable by its owner alone, the user the writing Jobs run as. */
export const trashList = opContract('trash-list', { asWriter: true }, queryCodec);

/** A restore may remake the folders above what it puts back. */
export const trashRestore = opContract<'trash-restore', { trashId: string; to: string }, { mutates: true; lostResult: 'settled'; chown: true }>(
  'trash-restore',
  { mutates: true, lostResult: 'settled', chown: true },
  {
    encode(p) {
      const a = ['--trash-id', p.trashId ?? ''];
      if (p.to) a.push('--to', p.to);
      return a;
    },
    decode: (f) => ({ trashId: f.trashId, to: f.to }),
    refuse: (f) => (TRASH_ID.test(f.trashId) ? undefined : '--trash-id must be 16 lowercase hex digits'),
  },
);

/** A purge without a record purges all (`--all`). */
export const trashPurge = opContract<'trash-purge', { trashId: string; all: boolean }, { mutates: true; lostResult: 'atomic' }>(
  'trash-purge',
  { mutates: true, lostResult: 'atomic' },
  {
    encode: (p) => (p.trashId ? ['--trash-id', p.trashId] : ['--all']),
    decode: (f) => ({ trashId: f.trashId, all: f.all }),
    refuse: (f) => (f.all || TRASH_ID.test(f.trashId) ? undefined : '--trash-id must be 16 lowercase hex digits (or --all)'),
  },
);

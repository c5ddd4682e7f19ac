/**
 * files-trash's ops: the undo trash listed, a record restored, records purged (docs/undo.md).
 * @module
 */
import { type OpFlags, opContract, queryCodec } from '../../lib/protocol/op-contract.ts';
import { TRASH_ID } from '../../lib/protocol/trash-env.ts';

/** The trash is readable by its owner alone, the user the writing Jobs run as. */
export const trashList = opContract('trash-list', { asWriter: true }, queryCodec);

export interface TrashRestoreFields {
  /** The record (`--trash-id`). */
  trashId: string;
  /** Where to put it back (`--to`); empty: where it was. */
  to: string;
}

/** A restore may remake the folders above what it puts back. */
export const trashRestore = opContract(
  'trash-restore',
  { mutates: true, lostResult: 'settled', chown: true },
  {
    encode(p) {
      const a = ['--trash-id', p.trashId ?? ''];
      if (p.to) a.push('--to', p.to);
      return a;
    },
    decode: (f: OpFlags): TrashRestoreFields => ({ trashId: f.trashId, to: f.to }),
    refuse: (f) => (TRASH_ID.test(f.trashId) ? undefined : '--trash-id must be 16 lowercase hex digits'),
  },
);

export interface TrashPurgeFields {
  /** The record (`--trash-id`); empty with `all`. */
  trashId: string;
  /** Every record (`--all`). */
  all: boolean;
}

/** A purge without a record purges all (`--all`). */
export const trashPurge = opContract(
  'trash-purge',
  { mutates: true, lostResult: 'atomic' },
  {
    encode: (p) => (p.trashId ? ['--trash-id', p.trashId] : ['--all']),
    decode: (f: OpFlags): TrashPurgeFields => ({ trashId: f.trashId, all: f.all }),
    refuse: (f) => (f.all || TRASH_ID.test(f.trashId) ? undefined : '--trash-id must be 16 lowercase hex digits (or --all)'),
  },
);

/**
 * files-batch's ops: many paths deleted, moved or given modes in one Job (their items in FELIS_BATCH_*).
 * @module
 */
import { opContract } from '../../lib/protocol/op-contract.ts';

export const deleteMany = opContract('delete-many', { mutates: true, lostResult: 'settled', edit: true, batch: true, items: 'paths' });
export const moveMany = opContract('move-many', { mutates: true, lostResult: 'settled', edit: true, batch: true, items: 'moves' });
/** A change of mode needs FOWNER: the Job runs as root, and the files are the game's uid's. */
export const chmodMany = opContract('chmod-many', { mutates: true, fowner: true, edit: true, batch: true, items: 'files' });

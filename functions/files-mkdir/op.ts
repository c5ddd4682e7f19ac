/**
 * files-mkdir's op: a folder made.
 * @module
 */
import { opContract } from '../../lib/protocol/op-contract.ts';

export const mkdir = opContract('mkdir', { mutates: true, lostResult: 'atomic', chown: true, edit: true, rerunnable: true });

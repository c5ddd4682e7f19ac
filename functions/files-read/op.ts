/**
 * files-read's op: one file's content.
 * @module
 */
import { opContract } from '../../lib/protocol/op-contract.ts';

export const read = opContract('read', { serve: true });

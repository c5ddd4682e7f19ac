/**
 * files-read's op: one file's content.
 * @module
 */
import { opContract } from '../op-contract.ts';

export const read = opContract('read', { serve: true });

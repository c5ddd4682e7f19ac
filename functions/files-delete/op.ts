/**
 * files-delete's op: one path removed (into the undo trash). Removing needs only DAC_OVERRIDE.
 * @module
 */
import { opContract } from '../../lib/protocol/op-contract.ts';

export const del = opContract('delete', { mutates: true, edit: true });

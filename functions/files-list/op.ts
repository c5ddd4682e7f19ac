/**
 * files-list's op: a folder's entries (a page of them when a query is given).
 * @module
 */
import { opContract, queryCodec } from '../../lib/protocol/op-contract.ts';

export const list = opContract('list', { serve: true, rootPath: true }, queryCodec);

/**
 * files-search's op: names under a folder that match a name or glob.
 * @module
 */
import { opContract, queryCodec } from '../../lib/protocol/op-contract.ts';

export const search = opContract('search', { serve: true, rootPath: true }, queryCodec);

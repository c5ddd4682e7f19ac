/**
 * files-zip's op: a file or folder packed into a zip beside it.
 * @module
 */
import { opContract } from '../op-contract.ts';

export const zip = opContract<'zip', { to: string }, { mutates: true; chown: true; async: true; heapLimited: true; rerunnable: true }>(
  'zip',
  { mutates: true, chown: true, async: true, heapLimited: true, rerunnable: true },
  // Without --to the Job picks a free name next to the source.
  { encode: (p) => (p.to ? ['--to', p.to] : []), decode: (f) => ({ to: f.to }) },
);

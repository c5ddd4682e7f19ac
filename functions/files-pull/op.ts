/**
 * files-pull's ops: a URL fetched into a staging folder of the pull's own (holding nothing), and its placement, which holds the world (docs/pulls.md).
 * @module
 */
import { type OpFlags, opContract } from '../../lib/protocol/op-contract.ts';

export interface PullFields {
  /** The http or https URL to fetch (`--url`); the operator's rules come in the env (FELIS_PULL_*). */
  url: string;
  /** The file's name in the folder `--path` (`--to`); empty: the one the answer or the URL suggests. */
  to: string;
}

export const pull = opContract(
  'pull',
  { mutates: true, holdsWorld: false, chown: true, async: true },
  {
    encode(p) {
      const a = ['--url', p.url ?? ''];
      // Without --to the Job takes the name the answer or the URL suggests.
      if (p.to) a.push('--to', p.to);
      return a;
    },
    decode: (f: OpFlags): PullFields => ({ url: f.url, to: f.to }),
    refuse: (f) => (f.url === '' ? '--url is required for pull' : undefined),
  },
);

export interface PullPlaceFields {
  /** The name the staged download lands as in the folder `--path` (`--to`). */
  to: string;
  /** The op id of the pull whose staged download it is (`--pull-op`). */
  pullOp: string;
}

/** The pull gave the file to the game already; placing it links it, which needs no CHOWN. */
export const pullPlace = opContract(
  'pull-place',
  { mutates: true },
  {
    encode: (p) => ['--to', p.to ?? '', '--pull-op', p.pullOp ?? ''],
    decode: (f: OpFlags): PullPlaceFields => ({ to: f.to, pullOp: f.pullOp }),
    refuse: (f) => (!/^[0-9a-f]{16}$/.test(f.pullOp) || f.to === '' ? 'pull-place needs --pull-op (16 lowercase hex digits) and --to' : undefined),
  },
);

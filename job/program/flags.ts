/**
 * `felis files` flags, parsed as Go's `flag` package does: `-x v`, `--x v`,
 * `-x=v`, `--x=v`; bool flags take no separate value but accept `=true`/`=false` (strconv.ParseBool
 * spellings); `--` ends the flags, and so does the first argument that is not a flag; the last of a
 * repeated flag wins. Every error is a `FlagError` (exit 2).
 *
 * @module
 */

import type { OpFlags } from '../../lib/protocol/op-contract.ts';
import { CONTRACTS, OPS } from '../../lib/protocol/ops.ts';

export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

/** Every flag of `felis files`: an op's own (OpFlags, which its contract decodes) and the modes'. */
export interface FilesFlags extends OpFlags {
  op: string;
  browseUrl: string;
  serve: boolean;
  /** With --serve: make small changes for callers holding the world's lock, instead of serving reads. */
  edit: boolean;
  receive: boolean;
}

type Kind = 'string' | 'bool' | 'int';

const SHARED_FLAGS: Record<string, { key: string; kind: Kind; usage: string }> = {
  op: {
    key: 'op',
    kind: 'string',
    usage: `op name: ${OPS.join(', ')} (the many-file ops and compress get their items in env FELIS_BATCH_*)`,
  },
  'browse-url': { key: 'browseUrl', kind: 'string', usage: 'run as a browser worker instead of one op' },
  path: { key: 'path', kind: 'string', usage: 'path relative to the root ("" means the root)' },
  'worlds-root': { key: 'worldsRoot', kind: 'string', usage: 'mount path of the world PVC' },
  'expect-sha256': { key: 'expectSha256', kind: 'string', usage: 'write precondition' },
  'create-only': { key: 'createOnly', kind: 'bool', usage: 'write refuses an existing path' },
  to: { key: 'to', kind: 'string', usage: 'rename destination; unzip: folder to extract into; zip, compress: archive name; copy: the new path; pull: the file name' },
  'source-url': { key: 'sourceUrl', kind: 'string', usage: 'upload source' },
  size: { key: 'size', kind: 'int', usage: 'upload size' },
  sha256: { key: 'sha256', kind: 'string', usage: 'write: digest of the content; upload: digest of the bytes' },
  overwrite: { key: 'overwrite', kind: 'bool', usage: 'upload or unzip may replace files' },
  serve: { key: 'serve', kind: 'bool', usage: 'serve list and read on the Pod address until idle (env FELIS_POD_IP, FELIS_SERVE_*)' },
  edit: { key: 'edit', kind: 'bool', usage: 'with --serve: make one small change per call for a caller holding the world lock (POST /op), instead of serving list and read' },
  receive: {
    key: 'receive',
    kind: 'bool',
    usage: 'receive uploads on the Pod address until idle (env FELIS_POD_IP, FELIS_SERVE_*, FELIS_RECEIVE_ONCE); with --op write, receive the content there instead of from FELIS_FILE_CONTENT_*',
  },
  limit: { key: 'limit', kind: 'int', usage: 'list: at most this many entries, in byte order of name (a paged listing); search: at most this many matches' },
  after: { key: 'after', kind: 'string', usage: 'list: start strictly after this name (a paged listing)' },
  q: { key: 'q', kind: 'string', usage: 'list: only names containing this text, any case (a paged listing); search: the name or glob to find' },
  text: { key: 'text', kind: 'string', usage: 'search: the text to find in files, ASCII letters in any case (a content search)' },
  'max-size': { key: 'maxSize', kind: 'int', usage: 'copy: refuse (too_large) unless the source is a regular file of at most this many bytes' },
  url: { key: 'url', kind: 'string', usage: 'pull: the http or https URL to fetch into the folder --path (env FELIS_PULL_*)' },
  format: { key: 'format', kind: 'string', usage: 'compress: the archive format (zip, tar.gz, tar.xz, tar.zst)' },
  'trash-id': { key: 'trashId', kind: 'string', usage: 'trash-restore, trash-purge: the trash record (env FELIS_TRASH*, FELIS_ACTOR)' },
  all: { key: 'all', kind: 'bool', usage: 'trash-purge: every trash record' },
  'pull-op': { key: 'pullOp', kind: 'string', usage: 'pull-place: the op id of the pull whose staged download is placed in the folder --path as --to' },
};

/**
 * The flags above and each op's own (its contract's `flags`, under its own name, its usage line
 * naming the op). Two ops may declare one flag alike; a flag declared twice in different ways, or
 * over a shared one, is a mistake of the contracts, refused as the program loads.
 */
const FLAGS: Record<string, { key: string; kind: Kind; usage: string }> = { ...SHARED_FLAGS };
for (const c of CONTRACTS) {
  for (const [name, own] of Object.entries(c.flags as Record<string, { kind: Kind; usage: string }>)) {
    const had = FLAGS[name];
    if (had && (Object.hasOwn(SHARED_FLAGS, name) || had.kind !== own.kind)) throw new Error(`op ${c.name} declares the flag -${name}, already declared otherwise`);
    FLAGS[name] = had ? { ...had, usage: `${had.usage}; ${c.name}: ${own.usage}` } : { key: name, kind: own.kind, usage: `${c.name}: ${own.usage}` };
  }
}

export function defaultFlags(): FilesFlags {
  return {
    op: '',
    browseUrl: '',
    path: '',
    worldsRoot: '/data',
    expectSha256: '',
    createOnly: false,
    to: '',
    sourceUrl: '',
    size: -1,
    sha256: '',
    overwrite: false,
    serve: false,
    edit: false,
    receive: false,
    maxSize: -1,
    url: '',
    format: '',
    trashId: '',
    all: false,
    pullOp: '',
  };
}

export const USAGE = [
  'usage: felis files --op <op> --path <path> [--worlds-root /data] [flags]',
  ...Object.entries(FLAGS).map(([name, f]) => `  -${name}${f.kind === 'bool' ? '' : ` ${f.kind}`}\n    \t${f.usage}`),
].join('\n');

/** strconv.ParseBool. */
function parseBool(s: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return false;
  return undefined;
}

/** strconv.ParseInt(s, 0, 64): sign, 0x/0o/0b/0 prefixes, `_` between digits; int64 range. */
function parseInt64(s: string): number | 'parse' | 'range' {
  let body = s;
  let neg = false;
  if (body.startsWith('+') || body.startsWith('-')) {
    neg = body.startsWith('-');
    body = body.slice(1);
  }
  let base = 10;
  let digits = body;
  let prefixed = false;
  if (/^0[xX]/.test(body)) [base, digits, prefixed] = [16, body.slice(2), true];
  else if (/^0[oO]/.test(body)) [base, digits, prefixed] = [8, body.slice(2), true];
  else if (/^0[bB]/.test(body)) [base, digits, prefixed] = [2, body.slice(2), true];
  else if (body.length > 1 && body.startsWith('0')) [base, digits, prefixed] = [8, body.slice(1), true];
  // Underscores only between digits, or between a base prefix and a digit.
  if (/__|_$/.test(digits) || (!prefixed && digits.startsWith('_'))) return 'parse';
  digits = digits.replace(/_/g, '');
  const alphabet = base === 16 ? /^[0-9a-fA-F]+$/ : base === 8 ? /^[0-7]+$/ : base === 2 ? /^[01]+$/ : /^[0-9]+$/;
  if (!alphabet.test(digits)) return 'parse';
  let v = 0n;
  for (const ch of digits) v = v * BigInt(base) + BigInt(parseInt(ch, 16));
  if (neg) v = -v;
  if (v > (1n << 63n) - 1n || v < -(1n << 63n)) return 'range';
  return Number(v);
}

export interface Parsed {
  flags: FilesFlags;
  /** Arguments after the flags (not used by the program). */
  rest: string[];
  /** `-h` / `-help` was asked for (Go's flag.ErrHelp). */
  help: boolean;
}

/** Parses the arguments after `files`. Throws FlagError with Go's messages. */
export function parseFlags(args: string[]): Parsed {
  const flags = defaultFlags();
  const rec = flags as unknown as Record<string, string | number | boolean>;
  let i = 0;
  while (i < args.length) {
    const s = args[i];
    if (s.length < 2 || s[0] !== '-') break;
    let minuses = 1;
    if (s[1] === '-') {
      minuses++;
      if (s.length === 2) {
        i++;
        break;
      }
    }
    let name = s.slice(minuses);
    if (name.length === 0 || name[0] === '-' || name[0] === '=') throw new FlagError(`bad flag syntax: ${s}`);
    i++;
    let value = '';
    let hasValue = false;
    const eq = name.indexOf('=', 1);
    if (eq > 0) {
      value = name.slice(eq + 1);
      hasValue = true;
      name = name.slice(0, eq);
    }
    const spec = Object.hasOwn(FLAGS, name) ? FLAGS[name] : undefined;
    if (!spec) {
      if (name === 'help' || name === 'h') return { flags, rest: args.slice(i), help: true };
      throw new FlagError(`flag provided but not defined: -${name}`);
    }
    if (spec.kind === 'bool') {
      if (hasValue) {
        const b = parseBool(value);
        if (b === undefined) throw new FlagError(`invalid boolean value ${JSON.stringify(value)} for -${name}: parse error`);
        rec[spec.key] = b;
      } else {
        rec[spec.key] = true;
      }
      continue;
    }
    if (!hasValue && i < args.length) {
      hasValue = true;
      value = args[i];
      i++;
    }
    if (!hasValue) throw new FlagError(`flag needs an argument: -${name}`);
    if (spec.kind === 'int') {
      const n = parseInt64(value);
      if (n === 'parse' || n === 'range') {
        throw new FlagError(`invalid value ${JSON.stringify(value)} for flag -${name}: ${n === 'parse' ? 'parse error' : 'value out of range'}`);
      }
      rec[spec.key] = n;
    } else {
      rec[spec.key] = value;
    }
  }
  return { flags, rest: args.slice(i), help: false };
}

/**
 * What an op of the file Job is, declared once: its name, its traits (what its Job may do and how
 * it runs) and its argv codec both ways (the functions render its flags, the Job program reads
 * them back). Each op's contract sits in its function's folder (functions/<name>/op.ts);
 * lib/protocol/ops.ts gathers them and derives every list the code keys by op. Pure: the Job
 * bundle imports it as the functions do.
 * @module
 */
import { type OpQuery, setQuery } from './op-query.ts';

/** The flags of `felis files` an op's fields come from, as job/program/flags.ts parses them (absent: their defaults). */
export interface OpFlags {
  path: string;
  worldsRoot: string;
  expectSha256: string;
  createOnly: boolean;
  to: string;
  sourceUrl: string;
  size: number;
  sha256: string;
  overwrite: boolean;
  /** list: the page size; absent unless given (a listing without it, `--after` or `--q` is Felis's). */
  limit?: number;
  /** list: the page starts strictly after this name; absent unless given. */
  after?: string;
  /** list: case-insensitive substring of the names listed; absent unless given. */
  q?: string;
  maxSize: number;
  /** pull: the URL to fetch. */
  url: string;
  /** compress: the archive's format. */
  format: string;
  /** trash-restore, trash-purge: the record's id. */
  trashId: string;
  /** trash-purge: every record. */
  all: boolean;
  /** pull-place: the op id of the pull whose staged download lands. */
  pullOp: string;
}

export interface OpTraits {
  /** Changes the world: a read-write mount, a holder Job, a lock while admitted. */
  mutates: boolean;
  /** A mutation that holds the world while it runs (a pull writes only its own staging). */
  holdsWorld: boolean;
  /** Creates files or folders: its Job gets CHOWN to give them to the game's uid. */
  chown: boolean;
  /** Changes modes: its Job gets FOWNER (it runs as root, the files are the game's uid's). */
  fowner: boolean;
  /** May run in the background: the caller gets an op id, not a result. */
  async: boolean;
  /** Made by an edit session's Pod for a lock holder (lib/protocol/edit-call.ts). */
  edit: boolean;
  /** Its Job runs with the archive ops' V8 heap limits (lib/job-spec/render.ts). */
  heapLimited: boolean;
  /** Places many paths under a journal, which records its op id. */
  journaled: boolean;
  /** Run again after a full volume met part way, once the trash made room (job/trash/room.ts). */
  rerunnable: boolean;
  /** Answered by a serving (browse) Pod. */
  serve: boolean;
  /** Its path may be empty, the world's root (a listing, a search); for the others a path is required. */
  rootPath: boolean;
  /** A many-file op: its items travel in FELIS_BATCH_* (lib/protocol/batch-env.ts). */
  batch: boolean;
  /** The field its items are under, when its Job carries items in FELIS_BATCH_* (a many-file op, compress). */
  items: 'paths' | 'moves' | 'files' | undefined;
  /** Runs as the writers' user with no capability: it reads what only they can (the trash). */
  asWriter: boolean;
  /**
   * What a change whose result was lost may have done (lib/files/lost-change.ts): `atomic`, made
   * in one step, so made or not made; `settled`, journaled, so the next change of the world
   * finishes or undoes it; `unknown`, possibly made in part.
   */
  lostResult: 'atomic' | 'settled' | 'unknown';
}

const NO_TRAITS: OpTraits = {
  mutates: false,
  holdsWorld: false,
  chown: false,
  fowner: false,
  async: false,
  edit: false,
  heapLimited: false,
  journaled: false,
  rerunnable: false,
  serve: false,
  rootPath: false,
  batch: false,
  items: undefined,
  asWriter: false,
  lostResult: 'unknown',
};

/**
 * One op. `F` is what its flags carry to the Job (the fields of its request besides op, path and
 * root); `encode` writes them after `--op <op> --path <path> --worlds-root <root>`, `decode` reads
 * them back from the parsed flags: decode(parse(encode(f))) is f.
 */
export interface OpContract<Name extends string = string, F extends object = object, T extends Partial<OpTraits> = Partial<OpTraits>, O extends OwnFlags = OwnFlags> {
  name: Name;
  traits: OpTraits & T;
  /** Flags of this op alone, beyond OpFlags: the Job program parses them (job/program/flags.ts) under these names. */
  flags: O;
  encode(f: EncodeInput<F>): string[];
  decode(f: OpFlags & OwnFlagValues<O>): F;
  /** Why parsed flags are not a command line of this op (the Job program's usage error), or undefined. */
  refuse(f: OpFlags & OwnFlagValues<O>): string | undefined;
}

/** An op's own flag: how the Job program parses it, and its line in the program's usage. */
export interface OwnFlag {
  kind: 'string' | 'int' | 'bool';
  usage: string;
}
export type OwnFlags = Readonly<Record<string, OwnFlag>>;
/** The parsed values of an op's own flags: absent when not given. */
export type OwnFlagValues<O extends OwnFlags> = { [K in keyof O]?: O[K]['kind'] extends 'int' ? number : O[K]['kind'] extends 'bool' ? boolean : string };

/** What encode takes: the fields, any of them absent (the functions' params), and a write's streamed-content digest. */
export type EncodeInput<F> = { [K in keyof F]?: F[K] } & { contentTokenSha256?: string };

/**
 * Declares an op: traits not given are false (`holdsWorld` follows `mutates`), and an op with
 * no flags of its own has an empty codec. An op whose fields fit no flag of OpFlags declares its
 * own (`flags`), so adding it changes no shared list.
 */
export function opContract<
  const Name extends string,
  F extends object = Record<never, never>,
  const T extends Partial<OpTraits> = Record<never, never>,
  const O extends OwnFlags = Record<never, never>,
>(
  name: Name,
  traits: T,
  codec?: {
    flags?: O;
    encode(f: EncodeInput<F>): string[];
    decode(f: OpFlags & OwnFlagValues<O>): F;
    refuse?(f: OpFlags & OwnFlagValues<O>): string | undefined;
  },
): OpContract<Name, F, T, O> {
  return {
    name,
    traits: { ...NO_TRAITS, holdsWorld: traits.mutates ?? false, ...traits } as OpTraits & T,
    flags: codec?.flags ?? ({} as O),
    encode: codec?.encode ?? (() => []),
    decode: codec?.decode ?? (() => ({}) as F),
    refuse: codec?.refuse ?? (() => undefined),
  };
}

/** `--limit`, `--after`, `--q`, `--text` for the fields of an op's query that are set (lib/protocol/op-query.ts). */
export function pushQuery(a: string[], p: OpQuery): void {
  const q = setQuery(p);
  if (q.limit !== undefined) a.push('--limit', String(q.limit));
  if (q.after !== undefined) a.push('--after', q.after);
  if (q.q !== undefined) a.push('--q', q.q);
  if (q.text !== undefined) a.push('--text', q.text);
}

/** The codec of a read-only op's query: only what is given, so a listing without one is Felis's command line. */
export const queryCodec = {
  encode(f: EncodeInput<OpQuery>): string[] {
    const a: string[] = [];
    pushQuery(a, f);
    return a;
  },
  decode: (f: OpFlags): OpQuery => setQuery(f),
};

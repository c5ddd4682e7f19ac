/**
 * The closed set of file operations a file Job performs, gathered from their contracts
 * (functions/<name>/op.ts, one module per function), and every op-keyed list the code uses, derived
 * from the contracts' traits. A new op is a contract in its function's op.ts (scripts/collect.ts
 * lists it in CONTRACTS); the compiler then asks for its run (`runs` in its folder's job/, which
 * job/dispatch/execute.ts collects) and its codec's samples (`samples` in its op.test-kit.ts).
 * @module
 */

import { CONTRACTS } from './contracts.generated.ts';
import type { OpContract, OpTraits } from './op-contract.ts';

/** Every op's contract, collected from the capability folders (scripts/collect.ts). */
export { CONTRACTS };

type AnyContract = (typeof CONTRACTS)[number];
export type Op = AnyContract['name'];
/** An op's contract, by its name. */
export type ContractOf<K extends Op> = Extract<AnyContract, { name: K }>;
/** What an op's flags carry to the Job (its request's fields besides op, path and root). */
export type OpFields<K extends Op> = ReturnType<ContractOf<K>['decode']>;
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
/**
 * Every op's fields at once, each optional: what a Job's parameters may carry for its op's codec
 * (lib/job-spec/render.ts), so an op's new field needs no second declaration there.
 */
export type AnyOpFields = Partial<Intersection<OpFields<Op>>>;
/** Fields of some ops a codec test round-trips (each folder's op.test-kit.ts): sparse and full. */
export type OpSamples = { [K in Op]?: OpFields<K>[] };
/** The ops whose contract has a trait set to true (or to a value, for `items`). */
export type OpsWith<T extends keyof OpTraits> = Extract<AnyContract, { traits: Record<T, true | 'paths' | 'moves' | 'files'> }>['name'];

export const OPS: readonly Op[] = CONTRACTS.map((c) => c.name);

const BY_NAME = new Map<string, AnyContract>(CONTRACTS.map((c) => [c.name, c]));

export function isOp(v: string): v is Op {
  return BY_NAME.has(v);
}

export function contractOf<K extends Op>(op: K): ContractOf<K> {
  return BY_NAME.get(op) as ContractOf<K>;
}

const traitOf = (op: Op): OpTraits => BY_NAME.get(op)!.traits;
const opsWith = <T extends keyof OpTraits>(t: T): readonly OpsWith<T>[] => OPS.filter((op) => traitOf(op)[t]) as OpsWith<T>[];

/** Every op but list, read, search and trash-list changes the world: RW mount, a holder Job, a lock while admitted. */
export function mutates(op: Op): boolean {
  return traitOf(op).mutates;
}

/**
 * A mutation that holds the world while it runs: every one but a pull, which writes only a staging
 * folder of its own (docs/pulls.md) and holds nothing, for Felis or for felis-world; what it fetched
 * is placed later by `pull-place`, which does hold the world.
 */
export function holdsWorld(op: Op): boolean {
  return traitOf(op).holdsWorld;
}

/** CHOWN is added only where new files or folders are created (a restore may remake the folders above what it puts back); delete and rename (one or many) only need DAC_OVERRIDE. */
export function needsChown(op: Op): boolean {
  return traitOf(op).chown;
}

/** A change of mode needs FOWNER: the Job runs as root, and the files are the game's uid's. */
export function needsFowner(op: Op): boolean {
  return traitOf(op).fowner;
}

/** The only ops that run in the background: the caller gets an op id, not a result. */
export const ASYNC_OPS = opsWith('async');
/** The ops whose Job gets the archive ops' heap limits (lib/job-spec/render.ts ARCHIVE_NODE_OPTIONS). */
export const HEAP_LIMITED_OPS = opsWith('heapLimited');
/**
 * Ops that place many paths under a journal: their Job is told its op id (from its own op-id label,
 * so the spec names nothing new), which the journal keeps, so the Job that recovers an interrupted
 * one can say which op it was (lib/protocol/recovered.ts).
 */
export const JOURNALED_OPS = opsWith('journaled');
/** The ops an edit session's Pod makes (lib/protocol/edit-call.ts). */
export const EDIT_OPS = opsWith('edit');
export type EditOp = OpsWith<'edit'>;
/** The many-file ops (lib/protocol/batch-env.ts). */
export const BATCH_OPS = opsWith('batch');
export type BatchOp = OpsWith<'batch'>;
/** The ops whose items travel in FELIS_BATCH_*: the many-file ops, and compress (its selection's paths). */
export const ITEMS_OPS = opsWith('items');
export type ItemsOp = OpsWith<'items'>;
/** The ops a serving (browse) Pod answers: the read-only ones. */
export const SERVE_OPS = opsWith('serve');
export type ServeOp = OpsWith<'serve'>;
/**
 * The mutations whose input is on the volume or in the Job's spec, which answer a full volume met
 * part way as their `no_space`: run again once the trash has made the room they need (job/trash/room.ts).
 * A many-file move answers it per item, after the moves it made, so it is not run again.
 */
export const RERUNNABLE_OPS = opsWith('rerunnable');

/** What a change of `op` whose result was lost may have done (lib/files/lost-change.ts). */
export function lostResultOf(op: Op): OpTraits['lostResult'] {
  return traitOf(op).lostResult;
}

/** The field an op's items are under (lib/protocol/batch-env.ts). */
export function itemsField(op: ItemsOp): 'paths' | 'moves' | 'files' {
  return traitOf(op).items!;
}

/** Whether an op's contract has a trait: for code that takes an op as a string. */
export function opHas(op: string, t: keyof OpTraits): boolean {
  const c = BY_NAME.get(op);
  return c !== undefined && Boolean(c.traits[t]);
}

export type { OpContract };

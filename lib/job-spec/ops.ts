/**
 * The closed set of file operations a file Job performs, and what each one implies: derived from
 * the ops' contracts (lib/protocol/ops.ts).
 * @module
 */
export { holdsWorld, isOp, mutates, needsChown, needsFowner, OPS, type Op } from '../protocol/ops.ts';

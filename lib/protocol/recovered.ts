/**
 * The recovery line: what a Job that mounts a world read-write found left by an op that was
 * stopped mid-placement (a crash, a kill), and what it made of it. It is printed before the result
 * line, one per interrupted op, as `FELIS-FILES-RECOVERED: {"op":"<op id>","kind":"unzip","now":"old"}`:
 * `now` is the tree after recovery — `new` (every staged file was ready, so the placement was
 * finished), `old` (what it had placed was put back) or `gone` (its destination folder had been
 * removed meanwhile). The function that reads it records it on the interrupted op's Job, so the
 * op listing can tell what became of an op whose own result was never printed.
 *
 * Felis's readers ignore lines they do not know, and take the last result line as before.
 * Written by the Job program and read by the runner and the ops listing: both halves live here.
 * @module
 */

export const RECOVERED_PREFIX = 'FELIS-FILES-RECOVERED: ';

export type RecoveredNow = 'new' | 'old' | 'gone';

export interface RecoveredOp {
  /** The interrupted op's id (its Job's `felis.lolicon.best/files-op` label). */
  op: string;
  /** What it was doing: `unzip`, … */
  kind: string;
  now: RecoveredNow;
}

/** An op id as the functions mint them (16 hex), and so as a Job's label carries it. */
export const OP_ID = /^[0-9a-f]{16}$/;

/** At most this many recovery lines are taken from one log (a world has few journals at once). */
export const MAX_RECOVERED = 16;

export function formatRecoveredLine(r: RecoveredOp): string {
  return RECOVERED_PREFIX + JSON.stringify({ op: r.op, kind: r.kind, now: r.now }) + '\n';
}

/** The recovery a line reports, or undefined for any other line (or a malformed one). */
export function parseRecoveredLine(line: string): RecoveredOp | undefined {
  if (!line.startsWith(RECOVERED_PREFIX)) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(line.slice(RECOVERED_PREFIX.length));
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const { op, kind, now } = v as Record<string, unknown>;
  if (typeof op !== 'string' || !OP_ID.test(op)) return undefined;
  if (typeof kind !== 'string' || !/^[a-z-]{1,32}$/.test(kind)) return undefined;
  if (now !== 'new' && now !== 'old' && now !== 'gone') return undefined;
  return { op, kind, now };
}

/** Every recovery a whole log reports (the ops listing's read), at most MAX_RECOVERED. */
export function recoveredIn(log: string): RecoveredOp[] {
  const out: RecoveredOp[] = [];
  for (const line of log.split('\n')) {
    const r = parseRecoveredLine(line.replace(/\r$/, ''));
    if (r && out.length < MAX_RECOVERED) out.push(r);
  }
  return out;
}

/**
 * The annotation lock's value, `<kind>@<RFC 3339 UTC, seconds>`, as Felis writes and reads it, and
 * how long one holds: in one place, because the functions write it (lib/maintenance) and an edit
 * session Pod checks the one a call carries before it changes anything (job/serve/edit-server.ts).
 * @module
 */

/** How long an annotation lock holds without a Job behind it, in both directions of clock skew. */
export const GRACE_MS = 2 * 60 * 1000;

export function rfc3339(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `<kind>@<RFC 3339 UTC, seconds>`: the lock value Felis writes and reads. */
export function lockValue(kind: string, at: Date): string {
  return `${kind}@${rfc3339(at)}`;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Splits a lock value; undefined for one nobody can date, which therefore holds nothing. */
export function parseLock(value: string): { kind: string; at: Date } | undefined {
  const i = value.indexOf('@');
  if (i <= 0) return undefined;
  const stamp = value.slice(i + 1);
  if (!RFC3339.test(stamp)) return undefined;
  const at = new Date(stamp);
  if (Number.isNaN(at.getTime())) return undefined;
  return { kind: value.slice(0, i), at };
}

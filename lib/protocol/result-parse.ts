/**
 * Decoding a result payload read from a Job's log: strict on the types of the fields we know,
 * lenient on fields a newer Job may add. The reading half of result.ts, apart from it only so the
 * Job program (which only writes) does not bundle zod.
 * @module
 */
import * as z from '../schema.ts';
import { FIELD_ORDER, type Result } from './result.ts';

const entrySchema = z.object({
  name: z.string(),
  size: z.number(),
  is_dir: z.boolean(),
  mod_time: z.string(),
  // Absent from an original Felis Job's listing (result.ts).
  mode: z.optional(z.string()),
  is_symlink: z.optional(z.boolean()),
});

const matchSchema = z.object({ path: z.string(), ...entrySchema.shape });

/** Lenient on unknown fields (a newer Job may add some), strict on the types of known ones. */
const resultSchema = z.object({
  code: z.optional(z.string()),
  error: z.optional(z.string()),
  entries: z.optional(z.nullable(z.array(entrySchema))),
  content: z.optional(z.string()),
  truncated: z.optional(z.boolean()),
  sha256: z.optional(z.string()),
  content_sha256: z.optional(z.string()),
  conflicts: z.optional(z.nullable(z.array(z.string()))),
  conflict_count: z.optional(z.number()),
  entry: z.optional(z.string()),
  need: z.optional(z.number()),
  avail: z.optional(z.number()),
  files: z.optional(z.number()),
  bytes: z.optional(z.number()),
  matches: z.optional(z.nullable(z.array(matchSchema))),
  scanned: z.optional(z.number()),
  // copy
  to: z.optional(z.string()),
  skipped: z.optional(z.number()),
  done: z.optional(z.nullable(z.array(z.string()))),
  failed: z.optional(z.nullable(z.array(z.object({ path: z.string(), error: z.object({ code: z.string(), message: z.string() }) })))),
  trash_items: z.optional(
    z.nullable(z.array(z.object({ id: z.string(), op: z.string(), paths: z.array(z.string()), bytes: z.number(), entries: z.number(), at: z.string(), expires_at: z.string(), actor: z.string() }))),
  ),
  trash_next: z.optional(z.string()),
  trash_id: z.optional(z.string()),
  restored: z.optional(z.nullable(z.array(z.string()))),
  purged: z.optional(z.number()),
  trash_bytes: z.optional(z.number()),
  staged: z.optional(z.boolean()),
  // Its op's result.ts checks it.
  report: z.optional(z.unknown()),
});

export class MalformedResultError extends Error {
  constructor(detail: string) {
    super(`malformed result: ${detail}`);
    this.name = 'MalformedResultError';
  }
}

/** Parses the JSON after the prefix. Throws `MalformedResultError` on anything that is not a Result. */
export function parseResultPayload(payload: string): Result {
  let raw: unknown;
  try {
    raw = JSON.parse(payload);
  } catch (e) {
    throw new MalformedResultError((e as Error).message);
  }
  const parsed = resultSchema.safeParse(raw);
  if (!parsed.success) throw new MalformedResultError(parsed.error.issues[0]?.message ?? 'invalid');
  const r = parsed.data;
  const out: Result = {};
  for (const k of FIELD_ORDER) {
    const v = r[k];
    if (v !== undefined && v !== null) (out as Record<string, unknown>)[k] = v;
  }
  return out;
}

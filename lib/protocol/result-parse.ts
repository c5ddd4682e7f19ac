/**
 * Decoding a result payload read from a Job's log: strict on the types of the fields we know,
 * lenient on fields a newer Job may add. The reading half of result.ts, apart from it only so the
 * Job program (which only writes) does not bundle zod.
 * @module
 */
import { z } from 'zod';
import { FIELD_ORDER, type Result } from './result.ts';

const entrySchema = z.object({
  name: z.string(),
  size: z.number(),
  is_dir: z.boolean(),
  mod_time: z.string(),
  // Absent from an original Felis Job's listing (result.ts).
  mode: z.string().optional(),
  is_symlink: z.boolean().optional(),
});

const matchSchema = z.object({ path: z.string(), ...entrySchema.shape });

/** Lenient on unknown fields (a newer Job may add some), strict on the types of known ones. */
const resultSchema = z.object({
  code: z.string().optional(),
  error: z.string().optional(),
  entries: z.array(entrySchema).nullable().optional(),
  content: z.string().optional(),
  truncated: z.boolean().optional(),
  sha256: z.string().optional(),
  content_sha256: z.string().optional(),
  conflicts: z.array(z.string()).nullable().optional(),
  conflict_count: z.number().optional(),
  entry: z.string().optional(),
  need: z.number().optional(),
  avail: z.number().optional(),
  files: z.number().optional(),
  bytes: z.number().optional(),
  matches: z.array(matchSchema).nullable().optional(),
  scanned: z.number().optional(),
  // copy
  to: z.string().optional(),
  skipped: z.number().optional(),
  done: z.array(z.string()).nullable().optional(),
  failed: z.array(z.object({ path: z.string(), error: z.object({ code: z.string(), message: z.string() }) })).nullable().optional(),
  trash_items: z
    .array(z.object({ id: z.string(), op: z.string(), paths: z.array(z.string()), bytes: z.number(), entries: z.number(), at: z.string(), expires_at: z.string(), actor: z.string() }))
    .nullable()
    .optional(),
  trash_next: z.string().optional(),
  trash_id: z.string().optional(),
  restored: z.array(z.string()).nullable().optional(),
  purged: z.number().optional(),
  trash_bytes: z.number().optional(),
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


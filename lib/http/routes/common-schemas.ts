/**
 * Schema pieces the routes of several functions share (functions/<fn>/schemas.ts): the `?path=`
 * query, the `?…=true` flags, a digest, a background op's view, a listing's entry, a status answer,
 * a raw body, a batch's items, the `Prefer` header.
 * @module
 */
import { MAX_BATCH_ITEMS } from '../../protocol/batch-env.ts';
import * as z from '../../schema.ts';
import { described } from '../../schema.ts';

const PATH_REQUIRED = 'the ?path= query parameter is required';
/** `?path=`: read by the file routes' common front (file-call.ts); here for the document. */
export const pathQuery = z.object({
  path: described(
    z.string({ error: PATH_REQUIRED }).check(z.minLength(1, { error: PATH_REQUIRED })),
    "a path inside the world folder ('/'-separated; a leading '/' is the world folder: docs/routes.md, Paths)",
  ),
});
/** An upload's `?parents=`: a folder upload, file by file. */
export const PARENTS = "create the missing folders of `path` first, each as mkdir would (0755, the game's uid, never through a link leading out); they stay if the upload then fails";
/** A flag that is on only for `true`: anything else is off, as the routes always read it. */
export const onlyTrue = (what: string) =>
  described(
    z.pipe(
      z.optional(z.string()),
      z.transform((v) => v === 'true'),
    ),
    `\`true\`: ${what}; any other value or none: not`,
  );
/** A count of bytes, entries or records: a whole number, never below 0 (`integer` in the document). */
export const wholeCount = z.int().check(z.gte(0));
export const sha256Hex = described(z.string(), 'SHA-256, 64 lowercase hex characters');
/** What every 202 that names an op sends beside it (lib/http/op-accepted.ts). */
export const opLocationHeader = { Location: { description: "the op's own URL, a path: `/api/v1/servers/{name}/files/ops/{id}` (GET it to follow the op)", required: true } };
/** A background op as the listing and the 202 of a start show it (lib/ops/view.ts). */
export const opViewSchema = z.strictObject({
  id: z.string(),
  op: described(z.string(), 'unzip, zip, copy, upload or pull'),
  path: z.string(),
  state: z.enum(['running', 'succeeded', 'failed']),
  started_at: described(z.string(), 'RFC 3339, whole seconds'),
  finished_at: described(z.optional(z.string()), 'once ended'),
  done: wholeCount,
  total: wholeCount,
  files: described(z.optional(wholeCount), 'on success, when non-zero'),
  bytes: described(z.optional(wholeCount), 'on success, when non-zero'),
  to: described(z.optional(z.string()), "a copy or a pull, on success: the path it landed at; a compress: the archive's path"),
  skipped: described(z.optional(wholeCount), 'a copy or a compress, on success: entries left out (links, special files, the withheld file), when non-zero'),
  error: described(
    z.optional(
      z.strictObject({
        code: z.string(),
        message: z.string(),
        entry: z.optional(z.string()),
        conflicts: z.optional(z.array(z.string())),
        conflict_count: z.optional(wholeCount),
        need: z.optional(wholeCount),
        avail: z.optional(wholeCount),
      }),
    ),
    'when failed',
  ),
  recovered: described(
    z.optional(
      z.strictObject({
        now: described(z.enum(['new', 'old', 'gone']), 'new: the next op finished placing it; old: what it had placed was put back; gone: its destination folder was removed'),
        by: described(z.string(), 'the op whose Job recovered the world (the op itself, for a stop while staging)'),
        message: z.string(),
      }),
    ),
    'an op stopped mid-way whose journal a later op of the world finished or undid (docs/background-ops.md)',
  ),
});
export const entrySchema = z.object({
  name: z.string(),
  size: wholeCount,
  is_dir: z.boolean(),
  mod_time: described(z.string(), 'RFC 3339 with nanoseconds'),
  mode: described(z.optional(z.string()), 'the permission bits, three octal digits (`644`); absent only from a Job of the original image'),
  is_symlink: described(z.optional(z.boolean()), 'a symbolic link, listed as itself (never followed); absent only from a Job of the original image'),
});
/** The bounds of each {@link wholeNumberText}: the document renders its parameter as this `integer` (openapi.ts). */
export const WHOLE_NUMBERS = z.registry<{ minimum: number; maximum: number }>();
/**
 * A query parameter's text that spells a whole number: `pattern` (its digits) and from `minimum`
 * to `maximum`, else `error`. Text still (a route parses it on, or passes it on as it came); the
 * document calls it the integer it spells, with these bounds.
 */
export function wholeNumberText(pattern: RegExp, minimum: number, maximum: number, error: string): z.ZodMiniString {
  const text = z.string({ error }).check(z.refine((v) => pattern.test(v) && Number(v) >= minimum && Number(v) <= maximum, { error }));
  WHOLE_NUMBERS.add(text, { minimum, maximum });
  return text;
}
/** 1..PAGE_MAX_ENTRIES (5000) in decimal, no sign, no leading zero. */
export const LIMIT_PATTERN = /^(?:[1-9][0-9]{0,2}|[1-4][0-9]{3}|5000)$/;
export const statusOf = (status: string, extra: Record<string, z.ZodMiniType> = {}) => z.strictObject({ path: z.string(), ...extra, status: z.literal(status) });
export const rawFile = { contentTypes: ['application/octet-stream'], description: "the file's bytes, any content type" } as const;
export const digestHeaders = {
  'Content-Length': { description: "the body's byte count (411 length_required without it)", required: true },
  'Content-Digest': { description: "the body's SHA-256: `sha-256=:<base64>:`", required: true },
};
/** One path of a batch's items; each is judged by the Job (containment, existence, guards). */
export const itemPath = (what: string) => z.string({ error: `${what} must be a string` }).check(z.minLength(1, { error: `${what} cannot be empty` }));
/** 1 to MAX_BATCH_ITEMS (1000) items. */
export const items = <T extends z.ZodMiniType>(item: T, what: string) =>
  z
    .array(item, { error: `${what} must be a list` })
    .check(z.minLength(1, { error: `${what} needs at least one item` }))
    .check(z.maxLength(MAX_BATCH_ITEMS, { error: `${what} takes at most ${MAX_BATCH_ITEMS} items` }));
export const preferHeader = { Prefer: { description: '`wait=<s>` (at most 30): wait for another file mutation instead of a 409' } };

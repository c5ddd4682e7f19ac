/**
 * The zod schemas of every route in table.ts, under the same ids: its query, its body, and each
 * success answer as the handler sends it. The query and body schemas are what lib/http parses
 * (register.ts); the answers are what the OpenAPI document promises, so they describe what the
 * handlers really send: nullable where it can be null, optional where it can be absent, and
 * strict only where the handler builds the whole object itself.
 * @module
 */

import { MAX_BATCH_ITEMS } from '../../protocol/batch-env.ts';
import { SEARCH_BUDGET_MS, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, SEARCH_MIN_QUERY } from '../../protocol/limits.ts';
import { NAME_MAX } from '../../protocol/names.ts';
import { PAGE_DEFAULT_ENTRIES, PAGE_MAX_ENTRIES } from '../../protocol/op-query.ts';
import { PACK_FORMATS } from '../../protocol/pack-format.ts';
import { TRASH_ID } from '../../protocol/trash-env.ts';
import * as z from '../../schema.ts';
import { described } from '../../schema.ts';
import { writeBodySchema } from '../write-body.ts';
import type { ROUTES } from './table.ts';
import type { SchemaTable } from './types.ts';

const PATH_REQUIRED = 'the ?path= query parameter is required';
const SEARCH_Q = `?q= needs at least ${SEARCH_MIN_QUERY} characters`;
const SEARCH_LIMIT = `?limit= must be a whole number from 1 to ${SEARCH_MAX_LIMIT}`;
/** `?path=`: read by the file routes' common front (file-call.ts); here for the document. */
const pathQuery = z.object({
  path: described(z.string({ error: PATH_REQUIRED }).check(z.minLength(1, { error: PATH_REQUIRED })), "a path inside the world folder, as the Job sees it ('/'-separated)"),
});
/** An upload's `?parents=`: a folder upload, file by file. */
const PARENTS = "create the missing folders of `path` first, each as mkdir would (0755, the game's uid, never through a link leading out); they stay if the upload then fails";
/** A flag that is on only for `true`: anything else is off, as the routes always read it. */
const onlyTrue = (what: string) =>
  described(
    z.pipe(
      z.optional(z.string()),
      z.transform((v) => v === 'true'),
    ),
    `\`true\`: ${what}; any other value or none: not`,
  );

const sha256Hex = described(z.string(), 'SHA-256, 64 lowercase hex characters');

/** A background op as the listing and the 202 of a start show it (lib/ops/view.ts). */
export const opViewSchema = z.strictObject({
  id: z.string(),
  op: described(z.string(), 'unzip, zip, copy, upload or pull'),
  path: z.string(),
  state: z.enum(['running', 'succeeded', 'failed']),
  started_at: described(z.string(), 'RFC 3339, whole seconds'),
  finished_at: described(z.optional(z.string()), 'once ended'),
  done: z.number(),
  total: z.number(),
  files: described(z.optional(z.number()), 'on success, when non-zero'),
  bytes: described(z.optional(z.number()), 'on success, when non-zero'),
  to: described(z.optional(z.string()), "a copy or a pull, on success: the path it landed at; a compress: the archive's path"),
  skipped: described(z.optional(z.number()), 'a copy or a compress, on success: entries left out (links, special files, the withheld file), when non-zero'),
  error: described(
    z.optional(
      z.strictObject({
        code: z.string(),
        message: z.string(),
        entry: z.optional(z.string()),
        conflicts: z.optional(z.array(z.string())),
        conflict_count: z.optional(z.number()),
        need: z.optional(z.number()),
        avail: z.optional(z.number()),
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

/** An upload session as its receiver answers it (job/upload/session.ts), passed through. */
const uploadViewSchema = z.object({
  id: z.string(),
  path: z.string(),
  size: z.number(),
  received: z.number(),
  part_max_bytes: z.number(),
  parts: z.array(z.object({ size: z.number(), sha256: z.string() })),
});

const entrySchema = z.object({
  name: z.string(),
  size: z.number(),
  is_dir: z.boolean(),
  mod_time: described(z.string(), 'RFC 3339 with nanoseconds'),
  mode: described(z.optional(z.string()), 'the permission bits, three octal digits (`644`); absent only from a Job of the original image'),
  is_symlink: described(z.optional(z.boolean()), 'a symbolic link, listed as itself (never followed); absent only from a Job of the original image'),
});

const LIMIT_MESSAGE = `the ?limit= query parameter must be a whole number from 1 to ${PAGE_MAX_ENTRIES}`;
/** 1..PAGE_MAX_ENTRIES (5000) in decimal, no sign, no leading zero. */
const LIMIT_PATTERN = /^(?:[1-9][0-9]{0,2}|[1-4][0-9]{3}|5000)$/;
/** A name-like parameter: it reaches the Job's command line, so no NUL, and no longer than a name can be. */
const nameParam = (name: string, what: string) =>
  described(
    z.optional(
      z
        .string()
        .check(z.refine((v) => !v.includes('\0'), { error: `the ?${name}= query parameter cannot contain a NUL byte` }))
        .check(z.refine((v) => Buffer.byteLength(v) <= NAME_MAX, { error: `the ?${name}= query parameter is longer than ${NAME_MAX} bytes` })),
    ),
    what,
  );

const holderFields = {
  held: z.boolean(),
  kind: described(z.optional(z.string()), 'what holds it: backup, restore, file-write, …'),
  source: z.optional(z.enum(['job', 'lock'])),
  job: z.optional(z.string()),
  since: z.optional(z.string()),
  stale_lock: described(z.optional(z.string()), 'a lock annotation present but no longer holding'),
};

const serverView = z.strictObject({ name: z.string(), desiredState: z.string(), phase: z.string(), ready: z.boolean() });

const statusOf = (status: string, extra: Record<string, z.ZodMiniType> = {}) => z.strictObject({ path: z.string(), ...extra, status: z.literal(status) });

const rawFile = { contentTypes: ['application/octet-stream'], description: "the file's bytes, any content type" } as const;
const digestHeaders = {
  'Content-Length': { description: "the body's byte count (411 length_required without it)", required: true },
  'Content-Digest': { description: "the body's SHA-256: `sha-256=:<base64>:`", required: true },
};
/** One path of a batch's items; each is judged by the Job (containment, existence, guards). */
const itemPath = (what: string) => z.string({ error: `${what} must be a string` }).check(z.minLength(1, { error: `${what} cannot be empty` }));
/** 1 to MAX_BATCH_ITEMS (1000) items. */
const items = <T extends z.ZodMiniType>(item: T, what: string) =>
  z
    .array(item, { error: `${what} must be a list` })
    .check(z.minLength(1, { error: `${what} needs at least one item` }))
    .check(z.maxLength(MAX_BATCH_ITEMS, { error: `${what} takes at most ${MAX_BATCH_ITEMS} items` }));
const batchFields = {
  done: described(z.array(z.string()), "the items applied, in the request's order (a move's `from`)"),
  failed: z.array(z.strictObject({ path: z.string(), error: z.strictObject({ code: z.string(), message: z.string() }) })),
};
const BATCH_DONE = 'every item checked, then applied: those done, and those the disk refused after the check (space, I/O)';
const batchAnswer = { 200: { description: BATCH_DONE, json: z.strictObject(batchFields) } } as const;

/** One undo-trash record as the listing shows it (the Job's `trash_items`, job/trash/). */
const trashItemSchema = z.strictObject({
  id: described(z.string(), '16 lowercase hex digits: the record, for restore and purge (ids sort by age)'),
  op: described(z.string(), 'the op that put it there: delete, delete-many, write, upload, unzip, …'),
  paths: described(z.array(z.string()), "the paths it removed or replaced, from the world's root, in the op's order"),
  bytes: described(z.number(), 'bytes of regular files it holds'),
  entries: described(z.number(), 'files, folders and links it holds'),
  at: described(z.string(), 'RFC 3339 (ms): when it was trashed'),
  actor: described(z.string(), 'who asked for the op (the caller as the function saw it); empty when the Job was not told'),
  expires_at: described(z.string(), 'RFC 3339 (ms): when it goes for good'),
});
const TRASH_AFTER = 'the ?after= query parameter must be a trash record id (16 lowercase hex digits)';
const TRASH_LIMIT = `the ?limit= query parameter must be a whole number from 1 to ${PAGE_MAX_ENTRIES}`;

const WORLD_STATE_HEADER = {
  description:
    '`stopped`, or `running`: the server was running, starting or still stopping when the download was admitted, so a file may have been caught mid-save (a region file with a chunk half written); see docs/routes.md',
  required: true,
};

const preferHeader = { Prefer: { description: '`wait=<s>` (at most 30): wait for another file mutation instead of a 409' } };

export const SCHEMAS = {
  'files.list': {
    query: z.object({
      path: described(z.optional(z.string()), 'a folder; empty or absent: the root'),
      // Any of these makes a paged listing; with none the listing is the original one.
      limit: described(
        z.pipe(
          z.optional(z.string().check(z.regex(LIMIT_PATTERN, { error: LIMIT_MESSAGE }))),
          z.transform((v) => (v === undefined ? undefined : Number(v))),
        ),
        `a paged listing of at most this many entries, in byte order of name (1–${PAGE_MAX_ENTRIES}, default ${PAGE_DEFAULT_ENTRIES})`,
      ),
      after: nameParam('after', "a paged listing starting strictly after this name (the previous page's `next`); it need not exist"),
      q: nameParam('q', 'a paged listing of only the names containing this text, in any case (empty: all)'),
    }),
    responses: {
      200: {
        description: "the folder's entries",
        json: z.strictObject({
          path: z.string(),
          entries: z.array(entrySchema),
          truncated: described(z.boolean(), 'there are more entries than these'),
          next: described(z.optional(z.string()), "a paged listing with more entries: the last name of this page, the next page's `after`"),
          free_bytes: described(z.nullable(z.number()), "the volume's free bytes plus what the undo trash holds (a mutation gives the trash's bytes back when it needs room); null when unknown"),
          trash_bytes: described(z.number(), 'bytes the undo trash holds (0 when none)'),
          world_state: described(
            z.enum(['stopped', 'running']),
            '`running`: the server was running, starting or still stopping, so the game may have been saving while the folder was read (sizes and times of region files may be mid-save)',
          ),
        }),
      },
    },
  },
  'files.search': {
    query: z.object({
      path: described(z.optional(z.string()), 'the folder to search below; empty or absent: the root'),
      q: described(
        z.string({ error: SEARCH_Q }).check(z.refine((q) => Array.from(q).length >= SEARCH_MIN_QUERY, { error: SEARCH_Q })),
        'a case-insensitive part of the name; with `*` (any run) or `?` (one character), a glob on the whole name',
      ),
      limit: described(
        z.optional(
          z.pipe(
            z.pipe(z.string().check(z.regex(/^[0-9]{1,4}$/, { error: SEARCH_LIMIT })), z.transform(Number)),
            z
              .number()
              .check(z.gte(1, { error: SEARCH_LIMIT }))
              .check(z.lte(SEARCH_MAX_LIMIT, { error: SEARCH_LIMIT })),
          ),
        ),
        `the most matches answered, 1–${SEARCH_MAX_LIMIT}; default ${SEARCH_DEFAULT_LIMIT}`,
      ),
    }),
    responses: {
      200: {
        description: 'the entries found, in byte order of path',
        json: z.strictObject({
          path: z.string(),
          q: z.string(),
          matches: z.array(z.strictObject({ path: described(z.string(), "from the world's root"), ...entrySchema.shape })),
          truncated: described(z.boolean(), `stopped early: more matches than \`limit\`, or ${SEARCH_BUDGET_MS / 1000} s of walking ran out`),
          scanned: described(z.number(), 'entries looked at'),
        }),
      },
    },
  },
  'files.read': {
    query: pathQuery,
    responses: {
      200: {
        description: "the file's bytes, base64",
        json: z.strictObject({
          path: z.string(),
          content: described(z.string(), 'base64'),
          sha256: described(sha256Hex, 'of the bytes on disk: send it back as expect_sha256'),
          content_sha256: described(sha256Hex, 'of what is sent'),
        }),
      },
    },
  },
  'files.write': {
    query: pathQuery,
    body: {
      // Required in fact, optional to the schema: the route refuses a missing one with its own code (write-body.ts).
      json: z.extend(writeBodySchema, {
        content: described(writeBodySchema.shape.content, 'base64 of the new bytes (required: absent or null is 400 bad_request)'),
        content_sha256: described(writeBodySchema.shape.content_sha256, 'SHA-256 of the new bytes (required: absent is 400 digest_required)'),
        expect_sha256: described(writeBodySchema.shape.expect_sha256, 'write only if the file on disk still has this SHA-256 (409 file_changed otherwise)'),
        create_only: described(writeBodySchema.shape.create_only, 'write only if no file is there (409 file_exists otherwise)'),
      }),
    },
    requestHeaders: preferHeader,
    responses: { 200: { description: 'written', json: statusOf('written', { sha256: sha256Hex }) } },
  },
  'files.mkdir': { query: pathQuery, requestHeaders: preferHeader, responses: { 200: { description: 'created', json: statusOf('created') } } },
  'files.delete': {
    query: pathQuery,
    requestHeaders: preferHeader,
    responses: {
      200: {
        description: 'deleted',
        json: statusOf('deleted', {
          trash_id: described(z.optional(z.string()), 'the undo-trash record of what was deleted (restore it with files/trash/{id}/restore); absent when the trash is off'),
        }),
      },
    },
  },
  'files.rename': {
    query: pathQuery,
    body: { json: z.strictObject({ to: described(z.optional(z.string()), 'the new path (required: absent or empty is 400 bad_request)') }) },
    requestHeaders: preferHeader,
    responses: { 200: { description: 'renamed', json: statusOf('renamed', { to: z.string() }) } },
  },
  'files.delete_many': {
    body: { json: z.strictObject({ paths: described(items(itemPath('a path'), 'paths'), 'files, links or folders (recursively) inside the world') }) },
    requestHeaders: preferHeader,
    responses: {
      200: {
        description: BATCH_DONE,
        json: z.strictObject({
          ...batchFields,
          trash_id: described(z.optional(z.string()), 'the undo-trash record of what was deleted (one for the batch); absent when the trash is off or nothing was removed'),
        }),
      },
    },
  },
  'files.move': {
    body: {
      json: z.strictObject({
        moves: described(items(z.strictObject({ from: itemPath('from'), to: itemPath('to') }), 'moves'), 'each `from` moved to the new path `to` (its folder must exist; nothing may be there)'),
      }),
    },
    requestHeaders: preferHeader,
    responses: batchAnswer,
  },
  'files.chmod': {
    body: {
      json: z.strictObject({
        files: described(
          items(
            z.strictObject({
              path: itemPath('path'),
              mode: z
                .string({ error: 'mode must be a string of three octal digits, such as "644"' })
                .check(z.regex(/^[0-7]{3}$/, { error: 'mode must be three octal digits, such as "644" (no setuid, setgid or sticky bit)' })),
            }),
            'files',
          ),
          'a regular file or folder each, and its new permission bits',
        ),
      }),
    },
    requestHeaders: preferHeader,
    responses: batchAnswer,
  },
  'files.unzip': {
    query: pathQuery,
    body: { json: z.strictObject({ overwrite: z.optional(z.boolean()), to: described(z.optional(z.string()), 'an existing folder to extract into') }) },
    requestHeaders: preferHeader,
    responses: { 202: { description: 'the op started (or the one an earlier delivery started)', json: z.strictObject({ op: opViewSchema }) } },
  },
  'files.zip': {
    query: pathQuery,
    body: { json: z.strictObject({ name: described(z.optional(z.string()), 'a new `.zip` file name next to the path, by the name rule (docs/routes.md, Names): else 400 `bad_name`') }) },
    requestHeaders: preferHeader,
    responses: { 202: { description: 'the op started (or the one an earlier delivery started)', json: z.strictObject({ op: opViewSchema }) } },
  },
  'files.pull': {
    body: {
      json: z.strictObject({
        url: described(z.string({ error: 'url: an http or https URL is required' }), 'http or https; no credentials; where it leads is judged by the pull Job before each connection'),
        path: described(z.string({ error: 'path: the folder to pull into is required ("" for the root)' }), 'an existing folder inside the world ("" or "/" the root)'),
        name: described(
          z.optional(z.string()),
          "one new file name by the name rule (docs/routes.md, Names), else 400 `bad_name`; default: the answer's Content-Disposition name (held to the same rule: the op fails `bad_name`), else the URL path's last segment",
        ),
      }),
    },
    requestHeaders: preferHeader,
    responses: { 202: { description: 'the op started (or the one an earlier delivery started)', json: z.strictObject({ op: opViewSchema }) } },
  },
  'files.compress': {
    body: {
      json: z.strictObject({
        paths: described(items(itemPath('a path'), 'paths'), 'files and folders in one folder (not the root); the archive goes into that folder'),
        format: z.enum(PACK_FORMATS, { error: `format must be one of ${PACK_FORMATS.join(', ')}` }),
        name: described(
          z.optional(z.string({ error: 'name must be a string' })),
          "the archive's new file name by the name rule (docs/routes.md, Names), with the format's ending, else 400 `bad_name`; default `archive-<UTC yyyy-mm-ddThhmmss>.<ending>`",
        ),
      }),
    },
    requestHeaders: preferHeader,
    responses: { 202: { description: 'the op started (or the one an earlier delivery started)', json: z.strictObject({ op: opViewSchema }) } },
  },
  'files.pull.cancel': {
    responses: { 202: { description: 'the cancel call reached the pull', json: z.strictObject({ op: z.string(), status: z.literal('cancelling') }) } },
  },
  'files.copy': {
    query: pathQuery,
    body: { json: z.strictObject({ to: described(z.optional(z.string()), 'the new path (must not exist; its folder must); default: `<name> copy<.ext>` beside it') }) },
    requestHeaders: preferHeader,
    responses: {
      200: { description: 'a regular file up to 64 MiB, copied', json: statusOf('copied', { to: z.string(), sha256: described(sha256Hex, 'of the copy') }) },
      202: { description: 'anything else: the op started (or the one an earlier delivery started)', json: z.strictObject({ op: opViewSchema }) },
    },
  },
  'files.upload': {
    query: z.extend(pathQuery, { overwrite: onlyTrue('replace an existing file'), parents: onlyTrue(PARENTS) }),
    body: { raw: { ...rawFile, description: 'the whole file, at most 64 MiB' } },
    requestHeaders: { ...digestHeaders, ...preferHeader },
    responses: { 200: { description: 'placed', json: statusOf('uploaded', { sha256: sha256Hex, size: z.number() }) } },
  },
  'uploads.begin': {
    query: z.extend(pathQuery, { parents: onlyTrue(PARENTS) }),
    body: { json: z.strictObject({ size: z.number().check(z.int()).check(z.nonnegative()).check(z.lte(Number.MAX_SAFE_INTEGER)) }) },
    requestHeaders: preferHeader,
    responses: { 201: { description: 'the session', json: uploadViewSchema } },
  },
  'uploads.get': { responses: { 200: { description: 'the session', json: uploadViewSchema } } },
  'uploads.part': {
    query: z.object({
      offset: described(
        z.string({ error: 'the ?offset= query parameter must be a byte count' }).check(z.regex(/^\d{1,16}$/, { error: 'the ?offset= query parameter must be a byte count' })),
        'where the part starts: the bytes received so far',
      ),
    }),
    body: { raw: { ...rawFile, description: 'one part, at most 32 MiB' } },
    requestHeaders: digestHeaders,
    responses: { 200: { description: 'the session', json: uploadViewSchema } },
  },
  'uploads.cancel': { responses: { 204: { description: 'cancelled', empty: true } } },
  'uploads.commit': {
    body: { json: z.strictObject({ overwrite: z.optional(z.boolean()), sha256: z.optional(z.string().check(z.regex(/^[0-9a-f]{64}$/))) }) },
    responses: { 202: { description: 'placed: the upload as the ops listing shows it', json: z.strictObject({ op: opViewSchema, sha256: sha256Hex }) } },
  },
  'files.trash.list': {
    query: z.object({
      limit: described(
        z.pipe(
          z.optional(z.string().check(z.regex(LIMIT_PATTERN, { error: TRASH_LIMIT }))),
          z.transform((v) => (v === undefined ? undefined : Number(v))),
        ),
        `at most this many records (1–${PAGE_MAX_ENTRIES}; the Job's default without)`,
      ),
      after: described(
        z.optional(z.string().check(z.refine((v) => v === '' || TRASH_ID.test(v), { error: TRASH_AFTER }))),
        "the records older than this id (the previous page's `next`); empty or absent: from the newest",
      ),
    }),
    responses: {
      200: {
        description: 'the undo trash, newest first',
        json: z.strictObject({
          items: z.array(trashItemSchema),
          next: described(z.optional(z.string()), "more records: the last id of this page, the next page's `after`"),
          trash_bytes: described(z.number(), 'bytes the whole trash holds (0 when empty)'),
        }),
      },
    },
  },
  'files.trash.restore': {
    body: {
      json: z.strictObject({
        to: described(
          z.optional(z.string({ error: 'to must be a string' }).check(z.minLength(1, { error: 'to cannot be empty' }))),
          'a folder to restore under, made when missing; default: where each path was',
        ),
      }),
    },
    requestHeaders: preferHeader,
    responses: {
      200: {
        description: 'put back; the record is gone from the trash',
        json: z.strictObject({ id: z.string(), restored: described(z.array(z.string()), "the paths put back, in the record's order") }),
      },
    },
  },
  'files.trash.purge': {
    requestHeaders: preferHeader,
    responses: {
      200: { description: 'removed for good', json: z.strictObject({ id: z.string(), purged: described(z.number(), 'records removed (1)'), bytes: described(z.number(), 'bytes freed') }) },
    },
  },
  'files.trash.purge_all': {
    requestHeaders: preferHeader,
    responses: { 200: { description: 'every record removed for good', json: z.strictObject({ purged: described(z.number(), 'records removed'), bytes: described(z.number(), 'bytes freed') }) } },
  },
  'files.ops': { responses: { 200: { description: 'newest first, at most ten', json: z.strictObject({ ops: z.array(opViewSchema) }) } } },
  'files.download': {
    query: z.extend(pathQuery, { dir: onlyTrue('the folder as a zip') }),
    responses: {
      200: {
        description: 'a signed URL, valid 10 min',
        json: z.strictObject({
          url: described(z.string(), 'origin-relative unless FELIS_DOWNLOAD_BASE_URL is set'),
          filename: z.string(),
          expires_at: described(z.string(), 'RFC 3339, whole seconds'),
        }),
      },
    },
  },
  'exports.download': {
    responses: {
      200: {
        description: 'the file, or the folder as a zip, streamed',
        raw: { contentTypes: ['application/octet-stream', 'application/zip'], description: 'a file (application/octet-stream, with Content-Length) or a folder as a zip stream' },
        headers: {
          'Content-Disposition': { description: 'attachment, with the file name' },
          'X-Content-Type-Options': { description: 'nosniff' },
          'Cache-Control': { description: 'no-store' },
          'Accept-Ranges': { description: '`bytes` for a file, `none` for a folder (a zip stream is not resumable)' },
          ETag: { description: "a file's strong ETag (its identity, size, mtime and ctime); send it as `If-Range` to resume" },
          'X-Felis-World-State': WORLD_STATE_HEADER,
        },
      },
      206: {
        description: 'a file only: the one range asked for by `Range` (and `If-Range` still matching the ETag)',
        raw: { contentTypes: ['application/octet-stream'], description: 'the bytes of the range, with Content-Length' },
        headers: {
          'Content-Range': { description: '`bytes <first>-<last>/<size>`' },
          'Content-Disposition': { description: 'attachment, with the file name' },
          'Accept-Ranges': { description: 'bytes' },
          ETag: { description: "the file's strong ETag" },
          'X-Felis-World-State': WORLD_STATE_HEADER,
        },
      },
    },
  },
  'holder.get': { responses: { 200: { description: "what holds the server's world", json: z.strictObject(holderFields) } } },
  'holders.list': {
    responses: { 200: { description: 'every held server in the namespace', json: z.strictObject({ holders: z.array(z.strictObject({ server: z.string(), ...holderFields })) }) } },
  },
  'server.start': { responses: { 202: { description: 'asked to run', json: serverView } } },
  'server.stop': { responses: { 202: { description: 'asked to stop', json: serverView } } },
  'lock.remove': {
    query: z.object({
      force: described(
        z.pipe(
          z.optional(z.enum(['true', 'false'], { error: 'force must be true or false' })),
          z.transform((v) => v === 'true'),
        ),
        '`true`: remove a lock younger than Grace too',
      ),
    }),
    responses: {
      200: {
        description: 'what was removed',
        json: z.strictObject({
          name: z.string(),
          removed: z.boolean(),
          lock: z.nullable(z.strictObject({ kind: z.string(), since: z.nullable(z.string()), value: z.string(), fresh: z.boolean() })),
        }),
      },
    },
  },
  'restore.settle': {
    responses: {
      200: {
        description: 'every chain the pass looked at, and every pull it placed or left waiting',
        json: z.strictObject({
          // Both from the route; a source's event answers the part it started (a backup Job: chains; a pull Job: pulls).
          chains: z.optional(
            z.array(
              z.strictObject({
                job: z.string(),
                server: z.string(),
                state: z.enum(['started', 'abandoned', 'pending']),
                reason: z.optional(z.string()),
                message: z.optional(z.string()),
                error: z.optional(z.string()),
              }),
            ),
          ),
          pulls: z.optional(
            z.array(
              z.strictObject({
                job: z.string(),
                server: z.string(),
                op: z.string(),
                state: z.enum(['placed', 'failed', 'pending']),
                to: z.optional(z.string()),
                code: z.optional(z.string()),
                error: z.optional(z.string()),
              }),
            ),
          ),
        }),
      },
    },
  },
} as const satisfies SchemaTable<typeof ROUTES>;

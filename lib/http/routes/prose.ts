/**
 * The routes' prose, by route id: the one-line summary of the OpenAPI document and the words on a
 * success of the README's route summary. Apart from the route table because only the document
 * generators (`npm run openapi`, the freshness test) read it: a function bundle never loads it, so
 * its size is on neither a woken service's start-up path nor its bundle.
 * @module
 */
import type { ROUTES } from './table.ts';
import type { ProseTable } from './types.ts';

export const ROUTE_PROSE = {
  'files.list': {
    summary: "One folder's entries (empty path: the world's root), or a page of them with `limit`, `after` or `q`. No lock.",
    answer:
      "`{path, entries:[{name,size,is_dir,mod_time,mode,is_symlink}], truncated, next?, free_bytes, trash_bytes, world_state}` — empty `path` = the root; `free_bytes` the free space plus the undo trash's `trash_bytes` (a mutation takes them back when it needs room), `null` when unknown; `world_state` `running` when the server runs (a read beside the game may catch a file mid-save). Without `limit`/`after`/`q`: directory order, at most 2000 entries. With any: byte order of name, at most `limit` (default 1000, at most 5000) after `after`, names containing `q` in any case; `next` (the next page's `after`) when there are more",
  },
  'files.search': {
    summary: 'Entries below a folder, at any depth, whose name contains `q` or matches it as a glob (`*`, `?`), any case. No lock.',
    answer:
      '`{path, q, matches:[{path,name,size,is_dir,mod_time}], truncated, scanned}` — in byte order of path; at most `limit` (default 200, at most 1000) matches and 5 s of walking, `truncated` when it stopped early; links are never descended',
  },
  'files.read': {
    summary: "A file's bytes, base64. No lock.",
    answer: '`{path, content (base64), sha256 (of the bytes on disk), content_sha256 (of what is sent)}` — at most 1 MiB',
  },
  'files.write': {
    summary: 'Replace or create a file, atomically, under the world lock.',
    answer: '`{path, status:"written", sha256}` — at most 256 KiB, atomic; with a job key the content is streamed to the write Job\'s Pod, in no cluster object (see docs/writes.md)',
  },
  'files.mkdir': {
    summary: 'One new folder, under the world lock.',
    answer: '`{path, status:"created"}` — one level',
  },
  'files.delete': {
    summary: 'A file, or a folder recursively, under the world lock.',
    answer: '`{path, status:"deleted", trash_id?}` — recursive; links removed, not followed; `trash_id` names the undo-trash record that keeps it',
  },
  'files.rename': {
    summary: 'Move without replacing, under the world lock.',
    answer:
      '`{path, to, status:"renamed"}` — never replaces; never takes a relative link (the entry or one inside it) to a place from where it leads further above the world\'s root (400 `bad_path` naming the link)',
  },
  'files.delete_many': {
    summary: 'Delete many files or folders in one Job, all or nothing, every one checked first, under the world lock.',
    answer:
      '`{done:[path…], failed:[{path, error:{code, message}}], trash_id?}` — 1–1000 paths; `trash_id` the one undo-trash record of what was deleted; every path is checked before anything changes, and the first bad one (or one the disk refuses) is answered with its `path` and nothing changed; all or nothing across any stop: journaled, so the next change of the world finishes or undoes an interrupted one (503 `outcome_unknown`, its `op`); `failed` only an item on another volume mounted in the world, or any item when the volume is too full to write the journal (then removed one by one)',
  },
  'files.move': {
    summary: 'Move or rename many files or folders in one Job without replacing, all or nothing, every one checked first, under the world lock.',
    answer:
      "`{done:[from…], failed:[{path, error}]}` — 1–1000 moves; never replaces; two moves onto one name, or of or into a folder another move takes, are 409 `batch_conflict`; a move that takes a relative link to a place from where it leads further above the world's root is 400 `bad_path`; nothing changed on any refusal, a move the disk refuses included; all or nothing across any stop, journaled as a many-file delete is; `failed` only when the volume is too full to write the journal (then moved one by one)",
  },
  'files.chmod': {
    summary: "Set many files' or folders' permission bits in one Job, every one checked first, under the world lock.",
    answer:
      '`{done:[path…], failed:[{path, error}]}` — 1–1000 files; `mode` three octal digits (`"644"`); links, special files and the withheld file are 400 `bad_path`; nothing changed on any refusal; not journaled: each mode is set in one step, so an interrupted one (503 `outcome_unknown`) may have set some, and running it again is safe',
  },
  'files.unzip': {
    summary: 'Extract an archive (.zip, .tar in any compression, .7z, .rar) or a single .gz/.bz2/.xz/.zst file in the background; follow it in the ops listing.',
    answer:
      "202 `{op}` — extracts in the background into the archive's folder, or into the existing folder `to`; `.zip`, `.tar`, `.tar.gz`/`.tgz`, `.tar.bz2`/`.tbz2`, `.tar.xz`/`.txz`, `.tar.zst`/`.tzst`, `.7z`, `.rar`, or a single `.gz`, `.bz2`, `.xz` or `.zst` file, extracted to its name without the ending (any case; the ending decides the format, the longest ending winning; anything else is 400 `bad_path` before any Job)",
  },
  'files.zip': {
    summary: 'Pack a file or folder into a .zip next to it, in the background.',
    answer: '202 `{op}` — packs into `name` (a `.zip` file name) next to it, or a free name (`world.zip`, `world (2).zip`, …)',
  },
  'files.pull': {
    summary:
      'Fetch a file from an http or https URL into a folder, in the background, through the SSRF guard; follow it in the ops listing. The download holds no world: other changes and a start go ahead meanwhile.',
    answer:
      "202 `{op}` — `path` an existing folder (`\"\"` the root); the file lands as `name`, or the name of the answer's Content-Disposition or the URL's path, never over an existing file; the guard (in the Job, before every connection and redirect) refuses special-purpose addresses and ports but 80/443 unless the operator allows them (`pull_refused` in the op). The download holds no world; once it ends the file is placed under the world's line, and the op is `running` until then (`file_exists` if the name was taken meanwhile, `not_stopped` if the server was started); at most 4 download at once per server (429 `too_many_pulls`)",
  },
  'files.pull.cancel': {
    summary: "Cancel a running pull through its Job's Pod; the op ends `pull_cancelled`, nothing placed.",
    answer: '202 `{op, status:"cancelling"}` — the op then ends `pull_cancelled` in the ops listing; 409 `pull_not_running` once it has ended',
  },
  'files.compress': {
    summary: 'Pack files and folders of one folder into a zip, tar.gz, tar.xz or tar.zst in that folder, in the background.',
    answer:
      "202 `{op}` (op `compress`, path the folder) — 1–1000 `paths`, all in one folder (else 400 `mixed_folders`), none twice, not the root; `format` `zip`, `tar.gz`, `tar.xz` or `tar.zst`; the archive is `name` (a file name with the format's ending) or `archive-<UTC yyyy-mm-ddThhmmss>.<ending>`, never over an existing file (the op fails `file_exists`); links, special files and the withheld file left out",
  },
  'files.copy': {
    summary: 'Copy a file or folder, all or nothing; a regular file up to 64 MiB at once, anything else in the background.',
    answer:
      '`{path, to, status:"copied", sha256}` for a regular file up to 64 MiB; else 202 `{op}` (op `copy` in `files/ops`) — to `to` (must not exist; its folder must) or beside it as `<name> copy<.ext>`, `<name> copy 2<.ext>`, …; links that stay inside are copied as links, other links, special files and the withheld file are left out',
  },
  'files.upload': {
    summary: 'One raw body of at most 64 MiB, streamed to a receiver Job and placed atomically.',
    answer:
      '`{path, status:"uploaded", sha256, size}` — raw body ≤ 64 MiB with `Content-Length` and `Content-Digest: sha-256=:<base64>:`, streamed to a receiver Job, placed atomically; `?parents=true` (beside `path`) makes the missing folders first',
  },
  'uploads.begin': {
    summary: 'Begin a resumable upload session (one per server).',
    answer:
      "201 view `{id, path, size, received, part_max_bytes, parts:[{size, sha256}]}` — one session per server, listed in `files/ops` while it lives; it holds the world only while its calls run (begin, each part, commit, cancel: each in its turn in the world's line, as any change), so other changes run between parts and a start goes ahead (docs/uploads.md); `?parents=true` (beside `path`) makes the missing folders at the begin",
  },
  'uploads.get': {
    summary: "An upload session's view, from its serving receiver (never starts one).",
    answer: '200 view',
  },
  'uploads.part': {
    summary: 'One raw part (at most 32 MiB) at `offset`, appended on the world volume.',
    answer:
      "200 view — raw part ≤ 32 MiB with `Content-Length`, `Content-Digest`; the server stopped (409 `not_stopped` while it runs), in its turn in the world's line, holding the world while its bytes are placed",
  },
  'uploads.cancel': {
    summary: 'Cancel an upload session.',
    answer: '204',
  },
  'uploads.commit': {
    summary: "Check the whole file's digest and place it.",
    answer: '202 `{op, sha256}` — `op` is the upload as `files/ops` lists it, already `succeeded`',
  },
  'files.trash.list': {
    summary: 'The undo trash: what deletes, overwrites and extractions removed, newest first, a page at a time. No lock.',
    answer:
      "`{items:[{id, op, paths:[…], bytes, entries, at, actor, expires_at}], next?, trash_bytes}` — newest first; at most `limit` records after the id `after`; `next` (the next page's `after`) when there are more; `trash_bytes` what the whole trash holds",
  },
  'files.trash.restore': {
    summary: 'Put a trash record back where it was (or under the folder `to`), under the world lock.',
    answer:
      '`{id, restored:[paths]}` — all or nothing; the folders missing on the way (`to` too) are made; 409 `file_exists` (its `path` names it) when one of them exists again; 404 `trash_not_found`',
  },
  'files.trash.purge': {
    summary: 'Remove one trash record for good, under the world lock.',
    answer: '`{id, purged, bytes}` — `bytes` freed; 404 `trash_not_found`',
  },
  'files.trash.purge_all': {
    summary: 'Empty the undo trash for good, under the world lock.',
    answer: '`{purged, bytes}` — every record; `bytes` freed',
  },
  'files.ops': {
    summary: "The server's ten newest background ops, newest first; works while the server runs.",
    answer: '`{ops:[…]}` — op views, see Background ops',
  },
  'files.download': {
    summary: 'Sign a download URL for a file, or a folder as a zip. No Job yet.',
    answer: '`{url, filename, expires_at}` — a signed URL valid 10 min; the world root is `bad_path`',
  },
  'exports.download': {
    summary: 'The signed URL: the file, or the folder as a zip stream. No bearer: the signature is the credential.',
    answer:
      'the file (`Content-Length`, `ETag`, `Accept-Ranges: bytes`; `Range` / `If-Range` give 206 with `Content-Range`, 416 `range_not_satisfiable` past the end), or the folder as a zip stream (`Accept-Ranges: none`), with `Content-Disposition: attachment`, `nosniff`, `no-store`, `X-Felis-World-State: stopped|running` (`running`: read beside the game, a file may be mid-save); an export Job holds the world as `export` while it streams (docs/downloads.md)',
  },
  'holder.get': {
    summary: "What holds one server's world.",
    answer: '`{held, kind?, source?: "job"\\|"lock", job?, since?, stale_lock?}`',
  },
  'holders.list': {
    summary: 'Every held server (or one with a stale lock) in the namespace, for operators.',
    answer: '`{holders:[{server, held, kind, source, job?, since?, stale_lock?}]}`',
  },
  'server.start': {
    summary: 'The guarded start: refused while anything holds the world.',
    answer: '202 `{name, desiredState:"Running", phase, ready}`; 409 `maintenance_in_progress` while held (`world_reclaiming` while the idle-world reaper holds it)',
  },
  'server.stop': {
    summary: 'Stop the server; always allowed.',
    answer: '202 `{name, desiredState:"Stopped", phase, ready}`',
  },
  'lock.remove': {
    summary: 'Remove a stuck annotation lock, with the checks kubectl cannot make.',
    answer:
      '`{name, removed, lock:{kind,since,value,fresh}\\|null}`; 409 `maintenance_in_progress` while a Job holds the world, `lock_protected` for a `migration@` lock, `lock_fresh` for one younger than 2 min without `force=true`',
  },
  'restore.settle': {
    summary: 'One settle pass: restore chains, and pulls waiting to be placed.',
    answer:
      "`{chains:[{job, server, state, reason?, message?, error?}], pulls:[{job, server, op, state, to?, code?, error?}]}` — a pull that ended `staged` is placed under the world's line (`placed`), refused (`failed` with its `code`), or left for the next pass (`pending`)",
  },
} satisfies ProseTable<typeof ROUTES>;

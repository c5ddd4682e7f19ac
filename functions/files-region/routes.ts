/**
 * files-region's routes (files.region, files.region.prune): their table entries and prose (what a
 * declaration holds, and why: lib/http/routes/common-entries.ts).
 * @module
 */
import { BESIDE_GAME, filesGet, filesUpdate, GATES, JOB, JSON_BODY, MUTATION, routesOf, S } from '../../lib/http/routes/common-entries.ts';
import type { ProseTable, RouteDeclarations } from '../../lib/http/routes/types.ts';

export const routes = routesOf('files-region', {
  'files.region': {
    method: 'GET',
    path: `${S}/files/region`,
    permission: filesGet,
    errors: [...GATES, ...BESIDE_GAME, ...JOB, [400, 'region_invalid']],
    event: { type: 'dev.felis.files.region', path: true },
  },
  'files.region.prune': {
    method: 'POST',
    path: `${S}/files/region/prune`,
    permission: filesUpdate,
    errors: [...GATES, ...JOB, ...MUTATION, ...JSON_BODY],
    event: { type: 'dev.felis.files.region.prune' },
  },
} as const satisfies RouteDeclarations);

export const prose = {
  'files.region': {
    summary: "One region file's chunk table. No lock.",
    answer:
      '`{path, chunks:[{x, z, sectors, bytes, timestamp, compression, external, inhabited_ticks, error?}], sectors_used, sectors_free, world_state}` — `inhabited_ticks` a number, a decimal string past ±(2^53-1), or null with `error` for a chunk that cannot be read; a name not `r.<x>.<z>.mca` or a file shorter than its header is 400 `region_invalid`',
  },
  'files.region.prune': {
    summary: 'Prune chunks inhabited under a bound (region/, entities/, poi/) in the background; journaled; old files to the trash.',
    answer:
      '202 `{op}` (op `region-prune`; its `files` the region files changed, `bytes` the bytes freed) — `path` a world folder or its `region` folder; refused while the server runs; `dry_run: true` answers 200 `{dry_run, region, below, scanned, files_changed, files:[{path, chunks_removed, bytes_freed, removed}], chunks_removed, bytes_freed, unreadable_chunks, skipped:[{path, reason}]}` and changes nothing; unreadable chunks are kept, a region file with a corrupt slot is left alone (`skipped`)',
  },
} satisfies ProseTable<typeof routes>;

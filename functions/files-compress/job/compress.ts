/**
 * compress(path, batch paths, format, to): packs a selection — files and folders that share one
 * folder — into one archive in that folder: zip (our zip writer), or tar compressed by gzip, xz or
 * zstd (archive/tar-pack.ts). `--path` is that folder; the items come in FELIS_BATCH_* as a
 * many-file op's do; `to` is the archive's name (the function always gives one; without it the
 * Job names it `archive-<UTC time>.<ending>`). An existing name is refused (exists), never
 * replaced.
 *
 * Landed as zip's is (archive/land.ts): under an editor working name, fsynced, chowned to the game's
 * uid, renamed into place, so a crash or a failure leaves no archive and no partial file under a real name. The
 * packer's rules are zip's (archive/pack.ts): links and special files skipped, the withheld file
 * left out, the root server.properties redacted, identity re-checked once a file is open.
 *
 * @module
 */
import fs from 'node:fs';
import { landArchive } from '../../../job/archive/land.ts';
import { type EntrySink, type PackHooks, packSources, resolveSource, type Source, withPackNeed } from '../../../job/archive/pack.ts';
import { MemorySpill, ZipWriter } from '../../../job/archive/zip-writer.ts';
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { fail, failure, msg } from '../../../job/volume/failure.ts';
import { join } from '../../../job/volume/pathutil.ts';
import { existsAt } from '../../../job/volume/root.ts';
import { DomainError } from '../../../lib/errors.ts';
import { BadNameError } from '../../../lib/files/name-field.ts';
import { checkArchiveName, defaultArchiveName, isPackFormat, type PackFormat, type Selection, selectionOf } from '../../../lib/files/pack-names.ts';
import type { Result } from '../../../lib/protocol/result.ts';

const { O_RDONLY, O_DIRECTORY } = fs.constants;

/** The request's selection, judged again here by the function's rules; a refusal as a Result. */
function selectionFrom(req: OpRequestOf<'compress'>): Selection | Result {
  const paths = req.batch && 'paths' in req.batch ? req.batch.paths : undefined;
  if (!paths || paths.length === 0) return fail('bad_path', 'nothing to pack: the selection is empty');
  let sel: Selection;
  try {
    sel = selectionOf(paths);
  } catch (e) {
    if (e instanceof DomainError) return fail('bad_path', e.message);
    throw e;
  }
  // `--path` names the folder (what the ops listing and a holder show); it must be the selection's.
  const given = req.path === '' ? '.' : req.path.replace(/^\.\/|\/$/g, '');
  if (given !== sel.folder) return fail('bad_path', `the selection is in ${sel.folder}, not ${req.path === '' ? '.' : req.path}`);
  return sel;
}

/** Test-only seams, never set in production. */
export interface CompressHooks extends PackHooks {
  /** Called once every entry is in the output, before it is synced and renamed (a test crashes here). */
  beforeLand?: () => void;
}

export async function compress(ctx: OpContext, req: OpRequestOf<'compress'>, hooks: CompressHooks = {}): Promise<Result> {
  const format = req.format ?? '';
  if (!isPackFormat(format)) return fail('bad_path', `${JSON.stringify(format)} is not a format a selection can be packed as (zip, tar.gz, tar.xz, tar.zst)`);
  const sel = selectionFrom(req);
  if (!('names' in sel)) return sel;
  const name = req.to !== undefined && req.to !== '' ? req.to : defaultArchiveName(format, new Date());
  try {
    checkArchiveName(name, format);
  } catch (e) {
    if (e instanceof BadNameError) return fail('bad_name', e.message);
    throw e;
  }
  const sources: Source[] = [];
  for (const n of sel.names) {
    const src = resolveSource(ctx.root, n);
    if (!('isDir' in src)) return src;
    sources.push(src);
  }
  const folder = sel.folder;
  let dirFd: number;
  try {
    dirFd = ctx.root.openFile(folder, O_RDONLY | O_DIRECTORY, 'open', true);
  } catch (e) {
    return failure(folder, e, 'open');
  }
  const final = join(folder, name);
  try {
    try {
      if (existsAt(dirFd, name)) return fail('exists', msg.exists(final));
    } catch (e) {
      return failure(folder, e, 'lstat');
    }
    const landed = await landArchive(ctx, { dirFd, name, final, readName: folder, spill: format === 'zip', beforeLand: hooks.beforeLand }, async (out, spill, progress) => {
      let sink: EntrySink;
      if (format === 'zip')
        sink = new ZipWriter(out, spill ?? new MemorySpill()); // the spill file is asked for a zip
      else {
        const { compressorFor, TarSink } = await import('../../../job/archive/tar-pack.ts');
        sink = new TarSink(await compressorFor(format), out);
      }
      return packSources(ctx.root, sources, sink, progress, hooks);
    });
    if (!('packed' in landed)) return withPackNeed(ctx.root, sources, landed);
    const { packed: stats, size } = landed;
    return { files: stats.files, bytes: size, to: final, ...(stats.skipped + stats.withheld > 0 ? { skipped: stats.skipped + stats.withheld } : {}) };
  } finally {
    fs.closeSync(dirFd);
  }
}

export type { PackFormat };

export const runs = { compress: (ctx: OpContext, req: OpRequestOf<'compress'>) => compress(ctx, req) };

/**
 * rename(path, to): moves a file, a folder (with its contents) or a link (itself). Never replaces,
 * never creates parents, never moves a guarded file (the forwarding secret, `config`, server.properties),
 * never takes a relative link further above the world's root than it reaches now (moved-links.ts).
 *
 * @module
 */
import fs from 'node:fs';
import { judgeMoveLinks, judgeMoveSource, judgeTargetFree, missingFolder, openMoveTarget, ROOT_MESSAGE } from '../../../job/op-kit/judge-move.ts';
import { LinkBudget } from '../../../job/runtime/moved-links.ts';
import { freeLandingRefused } from '../../../job/runtime/redacted-values.ts';
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';
import { sweepStale } from '../../../job/runtime/working-files.ts';
import { isOpened, openEntry } from '../../../job/volume/entry.ts';
import { bestEffort, fail, failure } from '../../../job/volume/failure.ts';
import { clean } from '../../../job/volume/pathutil.ts';
import { errCode, Parent } from '../../../job/volume/root.ts';
import type { Result } from '../../../lib/protocol/result.ts';

export function rename(ctx: OpContext, req: OpRequestOf<'rename'>): Result {
  const from = clean(req.path);
  const to = clean(req.to ?? '');
  if (from === '.' || to === '.') return fail('bad_path', ROOT_MESSAGE);

  const opened = openEntry(ctx.root, from, ROOT_MESSAGE);
  if (!isOpened(opened)) return opened;
  const src = opened.parent;
  try {
    const judged = judgeMoveSource(ctx, from, src);
    if (!('st' in judged)) return judged;
    const dst = openMoveTarget(ctx, to);
    if (!(dst instanceof Parent)) return dst;
    try {
      for (const fd of new Set([src.fd, dst.fd])) sweepStale(fd);
      const taken = judgeTargetFree(to, dst);
      if (taken) return taken;
      const links = judgeMoveLinks(ctx, from, src, to, dst, new LinkBudget());
      if (links) return links;
      // A file moved to where the root server.properties would be must hold no redacted placeholder.
      const placeholder = freeLandingRefused(ctx.root, dst.fd, dst.name, to, src.at());
      if (placeholder) return placeholder;
      try {
        fs.renameSync(src.at(), dst.at());
      } catch (e) {
        if (errCode(e) === 'ENOENT') return missingFolder(to);
        return failure(from, e, 'renameat');
      }
      for (const fd of new Set([src.fd, dst.fd])) {
        bestEffort(() => ctx.fsync(fd)); // the move is done either way
      }
      return {};
    } finally {
      dst.close();
    }
  } finally {
    src.close();
  }
}

export const runs = { rename };

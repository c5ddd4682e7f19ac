/**
 * What the zip and the tar extraction tests share: running the op on a test world, a refusal that
 * must leave the world and its surroundings as they were, and a rollback at every move.
 * @module
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { errnoError, type World } from '../test-support.ts';
import { treeDigest } from '../archive/test-kit.ts';
import type { ExecuteOptions } from '../types.ts';
import type { Result } from '../../lib/protocol/result.ts';

export async function unzip(w: World, rel: string, extra: { overwrite?: boolean; to?: string } = {}, opts: ExecuteOptions = {}): Promise<Result> {
  return w.run({ op: 'unzip', path: rel, ...extra }, opts);
}

/** Runs an extraction that must be refused, and proves the world and its surroundings are untouched. */
export async function refused(w: World, rel: string, extra: { overwrite?: boolean; to?: string } = {}, opts: ExecuteOptions = {}): Promise<Result> {
  const before = treeDigest(w.base);
  const r = await unzip(w, rel, extra, opts);
  assert.ok(r.code, `expected a refusal, got ${JSON.stringify(r)}`);
  assert.equal(treeDigest(w.base), before, `tree changed by a refused extraction: ${JSON.stringify(r)}`);
  return r;
}

/**
 * Fails the k-th rename of an overwriting extraction of `rel`, for every k up to `moves`, each on a
 * fresh world from `fresh`: the extraction fails, and the tree is as it was before it.
 */
export async function assertRollsBackAtEveryMove(fresh: () => World, rel: string, moves: number): Promise<void> {
  for (let failAt = 1; failAt <= moves; failAt++) {
    const w = fresh();
    const before = treeDigest(w.base);
    let n = 0;
    await assert.rejects(
      unzip(w, rel, { overwrite: true }, {
        rename: (a, b) => {
          if (++n === failAt) throw errnoError('EIO', 'injected');
          fs.renameSync(a, b);
        },
      }),
      /injected/,
    );
    assert.equal(treeDigest(w.base), before, `failure at move ${failAt}`);
  }
}

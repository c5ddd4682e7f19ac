/**
 * What the zip and the tar extraction tests share: running the op on a test world, a refusal that
 * must leave the world and its surroundings as they were, and a rollback at every move.
 * @module
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { treeDigest } from '../../../job/archive/forge.test-kit.ts';
import type { ExecuteOptions } from '../../../job/runtime/types.ts';
import { errnoError, type World } from '../../../job/testing/world.ts';
import type { Result } from '../../../lib/protocol/result.ts';

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
      unzip(
        w,
        rel,
        { overwrite: true },
        {
          rename: (a, b) => {
            if (++n === failAt) throw errnoError('EIO', 'injected');
            fs.renameSync(a, b);
          },
        },
      ),
      /injected/,
    );
    assert.equal(treeDigest(w.base), before, `failure at move ${failAt}`);
  }
}

/**
 * Extracts `rel` in a process of its own, as the Job runs it: the child bundled by esbuild (as the
 * Job program is) and given the Job's heap limits, so its peak memory is the extraction's plus
 * Node's own, not that of the TypeScript loader a test file runs under (about 50 MiB more).
 */
export async function extractInChild(w: World, rel: string): Promise<{ result: Result; maxRssMiB: number }> {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const { ARCHIVE_NODE_OPTIONS } = await import('../../../lib/job-spec/render.ts');
  const bundle = await childBundle();
  const env = { ...process.env, NODE_OPTIONS: ARCHIVE_NODE_OPTIONS };
  const { stdout } = await promisify(execFile)(process.execPath, [bundle, w.root, rel], { encoding: 'utf8', maxBuffer: 1 << 20, env });
  return JSON.parse(stdout) as { result: Result; maxRssMiB: number };
}

let bundled: Promise<string> | undefined;
/** The child bundled once per test process, into a file of its own (test files run side by side). */
function childBundle(): Promise<string> {
  bundled ??= (async () => {
    const { build } = await import('esbuild');
    const { common } = await import('../../../scripts/build.ts');
    const path = await import('node:path');
    // Under node_modules, so the codecs' WebAssembly files resolve from the package as from source.
    const outfile = path.join(import.meta.dirname, `../../../node_modules/.cache/felis-world/unzip-child-${process.pid}.mjs`);
    await build({ ...common, sourcemap: false, entryPoints: [path.join(import.meta.dirname, 'unzip-child.test-kit.ts')], outfile });
    process.once('exit', () => fs.rmSync(outfile, { force: true }));
    return outfile;
  })();
  return bundled;
}

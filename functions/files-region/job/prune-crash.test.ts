/**
 * Crash tests of the prune: the Job program runs as a real child process
 * (job/journal/crash-child.test-kit.ts) and is killed with SIGKILL after every durable step of its
 * journal and just before every rename, the undo trash on and off. After the next op of the world
 * (which recovers it first), the world's tree is exactly the tree before the prune or exactly the
 * tree after it, never a mix of old and new region, entities and poi files, and no working folder
 * or journal is left; with the trash on, the old files are in exactly one held record (or, the old
 * tree, in none).
 */

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { treeDigest } from '../../../job/archive/forge.test-kit.ts';
import { crashKit } from '../../../job/journal/crash.test-kit.ts';
import { isWorkFolderName, UNDO_DIR } from '../../../lib/protocol/working-names.ts';
import { pruneWorld } from '../region.test-kit.ts';

const { base, child } = crashKit('felis-region-crash-', {});
const ARGS = ['--op', 'region-prune', '--path', 'w', '--below', '1000'];

function world(): string {
  const root = fs.mkdtempSync(path.join(base, 'world-'));
  pruneWorld(path.join(root, 'w'));
  return root;
}
const digest = (root: string) => treeDigest(root, (rel) => rel === UNDO_DIR);
/** The trash's records by state (the undo folder at the root). */
function records(root: string): string[] {
  const dir = path.join(root, UNDO_DIR);
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).map((id) => {
    const r = JSON.parse(fs.readFileSync(path.join(dir, id, 'record.json'), 'utf8'));
    return `${r.state}:${r.items.length}`;
  });
}
const nextOp = (root: string, env: Record<string, string>) => child(root, ['--op', 'delete', '--path', 'no-such-file'], env);

for (const trash of ['off', 'on'] as const) {
  describe(`a prune with the trash ${trash}`, () => {
    const env = { FELIS_TRASH: trash };
    const oldTree = digest(world());
    const done = world();
    const clean = child(done, ARGS, env);
    const newTree = digest(done);

    test('a clean run changes the tree and reaches the journal steps', () => {
      assert.equal(clean.status, 0, clean.stderr);
      assert.match(clean.stdout, /FELIS-FILES-RESULT: \{"files":2,/);
      assert.notEqual(newTree, oldTree);
      assert.ok(clean.steps.length >= 3, clean.steps.join(','));
    });

    test('killed after every durable step, then recovered by the next op: the old tree or the new, nothing of its own left', () => {
      const seen = new Set<string>();
      for (let i = 1; i <= clean.steps.length; i++) {
        const root = world();
        const r = child(root, ARGS, { ...env, FELIS_TEST_STOP_AT: `${i}:KILL` });
        assert.equal(r.signal, 'SIGKILL', `step ${i} (${clean.steps[i - 1]}): ${r.stderr}`);
        const next = nextOp(root, env);
        assert.equal(next.status, 0, next.stderr);
        const d = digest(root);
        assert.ok(d === oldTree || d === newTree, `killed after step ${i} (${clean.steps[i - 1]}): a mix of old and new`);
        seen.add(d === oldTree ? 'old' : 'new');
        // With the trash on, the new tree has the one record holding all six old files; the old tree none.
        if (trash === 'on') assert.deepEqual(records(root), d === oldTree ? [] : ['held:6'], `step ${i} (${clean.steps[i - 1]})`);
        assert.deepEqual(fs.readdirSync(root).filter(isWorkFolderName), [], `step ${i}`);
      }
      assert.deepEqual([...seen].sort(), ['new', 'old'], 'both outcomes are reached');
    });

    test('killed just before every rename of the placement: the old tree or the new', () => {
      for (let k = 1; k <= 16; k++) {
        const root = world();
        const r = child(root, ARGS, { ...env, FELIS_TEST_KILL_RENAME: String(k) });
        const next = nextOp(root, env);
        assert.equal(next.status, 0, next.stderr);
        const d = digest(root);
        assert.ok(d === oldTree || d === newTree, `killed before rename ${k} (${r.signal}): a mix of old and new`);
        if (r.signal !== 'SIGKILL') break; // fewer renames than k: the run finished
      }
    });
  });
}

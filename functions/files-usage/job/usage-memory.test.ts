/**
 * The usage walk's memory bound, measured: the walk runs in a child process whose V8 heap is capped
 * well below what 200,000 names take (the browse Pod runs with a small heap too), over a folder of
 * 200,000 empty files beside a few nested ones, with every depth and the most largest files.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const COUNT = 200_000;
/** The child's heap: enough for the program and its bounded heaps, not for 200,000 names. */
const HEAP = ['--max-old-space-size=16', '--max-semi-space-size=1'];
const WALK = fileURLToPath(new URL('./usage-walk.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../job/volume/root.ts', import.meta.url));

let root = '';
before(() => {
  // A memory file system when there is one: 200,000 creates take seconds on a disk.
  root = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'felis-usage-mem-'));
  mkdirSync(join(root, 'big'));
  const made = spawnSync('sh', ['-c', `seq -f 'name-%06g.dat' 0 ${COUNT - 1} | xargs touch`], { cwd: join(root, 'big') });
  assert.equal(made.status, 0, made.stderr.toString());
  mkdirSync(join(root, 'big/name-1.d/deeper'), { recursive: true });
  writeFileSync(join(root, 'big/name-1.d/deeper/needle.dat'), 'n'.repeat(10_000));
});
after(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

test('a walk of a 200,000-entry folder is answered with a 16 MiB heap', { timeout: 90_000 }, () => {
  const script = `
import { WorldRoot } from ${JSON.stringify(ROOT)};
import { usageWalk } from ${JSON.stringify(WALK)};
const root = WorldRoot.open(${JSON.stringify(root)});
const r = await usageWalk(root, '', { depth: 3, top: 100 });
console.log(JSON.stringify({ files: r.files, dirs: r.dirs, truncated: r.truncated, children: r.children.length, big: r.children[0].children.length, largest: r.largest.length, first: r.largest[0].path }));
`;
  const r = spawnSync(process.execPath, [...HEAP, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 80_000 });
  assert.equal(r.status, 0, r.stderr.slice(0, 2000));
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
  assert.deepEqual(out, { files: COUNT + 1, dirs: 3, truncated: false, children: 1, big: 10, largest: 100, first: 'big/name-1.d/deeper/needle.dat' });
});

/**
 * The search's memory bound, measured: the search op runs in a child process whose V8 heap is
 * capped well below what 200,000 names take (the browse Pod runs with a small heap too), over a
 * folder of 200,000 empty files beside a few nested ones, and answers, whether almost nothing
 * matches or everything does.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { RESULT_PREFIX, type Result } from '../../../lib/protocol/result.ts';

const COUNT = 200_000;
/** The child's heap: enough for the program and 1000 matches, not for 200,000 names. */
const HEAP = ['--max-old-space-size=16', '--max-semi-space-size=1'];
const MAIN = fileURLToPath(new URL('../../../job/main.ts', import.meta.url));

let root = '';
before(() => {
  // A memory file system when there is one: 200,000 creates take seconds on a disk.
  root = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'felis-search-mem-'));
  mkdirSync(join(root, 'big'));
  const made = spawnSync('sh', ['-c', `seq -f 'name-%06g.dat' 0 ${COUNT - 1} | xargs touch`], { cwd: join(root, 'big') });
  assert.equal(made.status, 0, made.stderr.toString());
  mkdirSync(join(root, 'big/name-1.d/deeper'), { recursive: true });
  writeFileSync(join(root, 'big/name-1.d/deeper/needle.dat'), 'n');
  writeFileSync(join(root, 'big/Needle.txt'), 'N');
});
after(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

function search(q: string, limit: string): Result {
  const r = spawnSync(process.execPath, [...HEAP, MAIN, 'files', '--op', 'search', '--path', '', '--worlds-root', root, '--q', q, '--limit', limit], {
    encoding: 'utf8',
    maxBuffer: 16 << 20,
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr.slice(0, 2000));
  const line = r.stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX))!;
  return JSON.parse(line.slice(RESULT_PREFIX.length)) as Result;
}

test('a search of a 200,000-entry folder is answered with a 16 MiB heap: few matches', { timeout: 90_000 }, () => {
  const res = search('needle', '1000');
  assert.deepEqual(
    res.matches!.map((m) => m.path),
    ['big/Needle.txt', 'big/name-1.d/deeper/needle.dat'],
  );
  assert.equal(res.truncated, undefined);
  assert.equal(res.scanned, COUNT + 5);
});

test('…and when every name matches: the first 1000 in byte order, truncated', { timeout: 90_000 }, () => {
  const res = search('*.dat', '1000');
  const paths = res.matches!.map((m) => m.path);
  assert.equal(paths.length, 1000);
  assert.equal(res.truncated, true);
  // 'name-000000.dat' … then 'name-000001.dat', and 'name-1.d/' sorts after every 'name-0…'.
  assert.deepEqual(paths.slice(0, 2), ['big/name-000000.dat', 'big/name-000001.dat']);
  assert.equal(paths.at(-1), 'big/name-000999.dat');
});

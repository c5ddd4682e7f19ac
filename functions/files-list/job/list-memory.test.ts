/**
 * The paged listing's memory bound, measured: the list op runs in a child process whose V8 heap is
 * capped well below what 200,000 names take, over a folder of 200,000 empty files, and answers;
 * the same scan keeping every name (the op without its bound) dies under the same cap.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { RESULT_PREFIX, type Result } from '../../../lib/protocol/result.ts';

const COUNT = 200_000;
/** The child's heap: enough for the program and a 5000-entry page, not for 200,000 names. */
const HEAP = ['--max-old-space-size=16', '--max-semi-space-size=1'];
const MAIN = fileURLToPath(new URL('../../../job/main.ts', import.meta.url));

let root = '';
before(() => {
  // A memory file system when there is one: 200,000 creates take seconds on a disk.
  root = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'felis-list-mem-'));
  mkdirSync(join(root, 'big'));
  const made = spawnSync('sh', ['-c', `seq -f 'name-%06g.dat' 0 ${COUNT - 1} | xargs touch`], { cwd: join(root, 'big') });
  assert.equal(made.status, 0, made.stderr.toString());
});
after(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

function runChild(args: string[]) {
  return spawnSync(process.execPath, [...HEAP, ...args], { encoding: 'utf8', maxBuffer: 16 << 20, timeout: 60_000 });
}

test('a 5000-entry page of a 200,000-entry folder is answered with a 16 MiB heap', { timeout: 90_000 }, () => {
  const r = runChild([MAIN, 'files', '--op', 'list', '--path', 'big', '--worlds-root', root, '--limit', '5000', '--after', 'name-100000', '--q', 'NAME']);
  assert.equal(r.status, 0, r.stderr.slice(0, 2000));
  const line = r.stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX))!;
  const res = JSON.parse(line.slice(RESULT_PREFIX.length)) as Result;
  assert.equal(res.entries!.length, 5000);
  assert.equal(res.truncated, true);
  assert.equal(res.entries![0]!.name, 'name-100000.dat');
  assert.equal(res.entries!.at(-1)!.name, 'name-104999.dat');
});

test('control: the same scan keeping every name does not fit that heap', { timeout: 90_000 }, () => {
  const all = `const fs = require('fs'); const dir = fs.opendirSync(${JSON.stringify(join(root, 'big'))}, { encoding: 'buffer', bufferSize: 1024 }); const kept = [];
for (let d = dir.readSync(); d; d = dir.readSync()) kept.push({ name: Buffer.from(d.name), dir: d.isDirectory() }); console.log(kept.length);`;
  const r = runChild(['-e', all]);
  assert.notEqual(r.status, 0, 'holding 200,000 names must exceed the heap the op runs in');
  assert.match(r.stderr, /heap out of memory|Reached heap limit/);
});

/**
 * The index build's memory bound, measured: a browse-like process with a V8 heap capped well below
 * what 200,000 names take lists a page of a folder of 200,000 empty files, builds its index (the
 * external sort, in bounded chunks), and answers the next page from it.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const COUNT = 200_000;
const HEAP = ['--max-old-space-size=16', '--max-semi-space-size=1'];
const EXECUTE = fileURLToPath(new URL('../dispatch/execute.ts', import.meta.url));
const INDEX = fileURLToPath(new URL('./list-index.ts', import.meta.url));

let root = '';
before(() => {
  root = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'felis-list-index-mem-'));
  mkdirSync(join(root, 'world', 'big'), { recursive: true });
  mkdirSync(join(root, 'scratch'));
  const made = spawnSync('sh', ['-c', `seq -f 'name-%06g.dat' 0 ${COUNT - 1} | xargs touch`], { cwd: join(root, 'world', 'big') });
  assert.equal(made.status, 0, made.stderr.toString());
});
after(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

test('an index of a 200,000-entry folder is built and used with a 16 MiB heap', { timeout: 120_000 }, () => {
  const script = `
import { execute } from ${JSON.stringify(EXECUTE)};
import { ListIndexes } from ${JSON.stringify(INDEX)};
const listIndexes = new ListIndexes(${JSON.stringify(join(root, 'scratch'))}, { now: () => BigInt(Date.now() + 60000) * 1000000n });
const req = { op: 'list', path: 'big', worldsRoot: ${JSON.stringify(join(root, 'world'))}, limit: 1000, after: 'name-100000' };
const first = await execute(req, { listIndexes });
await listIndexes.settled();
const second = await execute(req, { listIndexes });
console.log(JSON.stringify({ stats: listIndexes.stats, same: JSON.stringify(first) === JSON.stringify(second), n: second.entries.length, first: second.entries[0].name }));
listIndexes.close();
`;
  const r = spawnSync(process.execPath, [...HEAP, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 100_000 });
  assert.equal(r.status, 0, r.stderr.slice(0, 2000));
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
  assert.deepEqual(out, { stats: { hits: 1, built: 1, dropped: 0 }, same: true, n: 1000, first: 'name-100000.dat' });
});

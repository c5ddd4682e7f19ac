/**
 * The content search's memory bound, measured: the Job program (its `--text` flag) runs in a child
 * process whose V8 heap is capped at 16 MiB (the browse Pod runs with a small heap too), over
 * files larger than that heap: an 8 MiB file of one line without a line end that matches
 * everywhere, and 7 MiB of lines that all match. It answers, with one match per line and the
 * limit's worth of lines.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { RESULT_PREFIX, type Result } from '../../../lib/protocol/result.ts';
import type { ContentReport } from '../op.ts';

const HEAP = ['--max-old-space-size=16', '--max-semi-space-size=1'];
const MAIN = fileURLToPath(new URL('../../../job/main.ts', import.meta.url));

let root = '';
before(() => {
  root = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'felis-csearch-mem-'));
  writeFileSync(join(root, 'one-line.txt'), Buffer.alloc(8 << 20, 'needle '));
  writeFileSync(join(root, 'many.log'), 'a needle here\n'.repeat(Math.floor((7 << 20) / 14)));
});
after(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

function search(text: string, path: string, limit: string): ContentReport {
  const r = spawnSync(process.execPath, [...HEAP, MAIN, 'files', '--op', 'search', '--path', path, '--worlds-root', root, '--text', text, '--limit', limit], {
    encoding: 'utf8',
    maxBuffer: 16 << 20,
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr.slice(0, 2000));
  const line = r.stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX))!;
  const res = JSON.parse(line.slice(RESULT_PREFIX.length)) as Result;
  assert.equal(res.code, undefined, res.error);
  return res.report as ContentReport;
}

test('an 8 MiB line that matches everywhere, 7 MiB of matching lines: answered with a 16 MiB heap, the limit held', { timeout: 90_000 }, () => {
  const r = search('NEEDLE', '', '1000');
  const one = r.matches.filter((m) => m.path === 'one-line.txt');
  const many = r.matches.filter((m) => m.path === 'many.log');
  assert.equal(r.matches.length, 1000);
  assert.equal(r.truncated, true);
  // The long line is one match wherever the walk met it, its text bounded.
  assert.ok(one.length <= 1);
  for (const m of one) assert.deepEqual([m.line, m.column, Buffer.byteLength(m.text) <= 512], [1, 1, true]);
  assert.deepEqual(
    many.slice(0, 2).map((m) => [m.line, m.column, m.text]),
    [
      [1, 3, 'a needle here'],
      [2, 3, 'a needle here'],
    ],
  );
});

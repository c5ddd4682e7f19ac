/**
 * Crash tests of the many-file ops: the Job program runs as a real child process
 * (job/journal/crash-child.ts) and is killed with SIGKILL after every item, and just before every
 * rename; after the next op in the same folder, every item is exactly as it was or exactly as
 * asked, never half, and nothing of the op's own is left.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { after } from 'node:test';
import { treeDigest } from '../archive/test-kit.ts';
import { encodeBatchEnv, type Batch } from '../../lib/protocol/batch-env.ts';

const CHILD = path.join(import.meta.dirname, '..', 'journal', 'crash-child.ts');
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-batch-crash-'));
after(() => fs.rmSync(base, { recursive: true, force: true }));

let runs = 0;
function child(root: string, args: string[], env: Record<string, string> = {}) {
  const stepsFile = path.join(base, `steps-${++runs}`);
  const r = spawnSync(process.execPath, [CHILD, 'files', '--worlds-root', root, ...args], {
    // Today's deletes, without the undo trash (job/trash/crash.test.ts kills the trash's own steps).
    env: { ...process.env, FELIS_TEST_STEPS: stepsFile, FELIS_TRASH: 'off', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const steps = fs.existsSync(stepsFile) ? fs.readFileSync(stepsFile, 'utf8').split('\n').filter(Boolean) : [];
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, steps };
}

const batchEnv = (b: Batch) => Object.fromEntries(encodeBatchEnv(b)!.map((v) => [v.name, v.value]));

/** A world whose root holds two files and two folders with contents. */
function world(): string {
  const root = fs.mkdtempSync(path.join(base, 'world-'));
  fs.writeFileSync(path.join(root, 'a.txt'), 'a');
  fs.writeFileSync(path.join(root, 'b.txt'), 'b');
  for (const d of ['d1', 'd2']) {
    fs.mkdirSync(path.join(root, d, 'sub'), { recursive: true });
    for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(root, d, 'sub', `${i}.dat`), `${d} ${i}`);
  }
  fs.mkdirSync(path.join(root, 'moved'));
  return root;
}

/** Each name's whole subtree (or its absence), for comparing item by item. */
function items(root: string, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) {
    const p = path.join(root, n);
    if (!fs.existsSync(p)) out[n] = 'gone';
    else if (fs.lstatSync(p).isDirectory()) out[n] = treeDigest(p);
    else out[n] = fs.readFileSync(p, 'utf8');
  }
  return out;
}

const leftovers = (root: string) => fs.readdirSync(root).filter((n) => n.startsWith('.felis-') && n !== '.felis-edit-withheld');

/** Any mutation sweeps its folder first; this one changes nothing else (the path does not exist). */
const nextOp = (root: string) => child(root, ['--op', 'delete', '--path', 'no-such-file']);

test('delete-many killed after every item, or just before a folder goes to trash: each item there or gone, nothing left over', () => {
  const names = ['a.txt', 'd1', 'b.txt', 'd2'];
  const args = ['--op', 'delete-many', '--path', '.'];
  const env = batchEnv({ paths: names });
  const template = world();
  const old = items(template, names);
  const clean = child(world(), args, env);
  assert.equal(clean.status, 0, clean.stderr);
  assert.match(clean.stdout, /FELIS-FILES-RESULT: \{"done":\["a.txt","d1","b.txt","d2"\]\}/);
  const kills = [
    ...clean.steps.map((_, i) => ({ FELIS_TEST_STOP_AT: `${i + 1}:KILL` })),
    { FELIS_TEST_KILL_RENAME: '1' },
    { FELIS_TEST_KILL_RENAME: '2' },
  ];
  for (const kill of kills) {
    const root = world();
    const r = child(root, args, { ...env, ...kill });
    assert.equal(r.signal, 'SIGKILL', `${JSON.stringify(kill)}: ${r.stderr}`);
    const next = nextOp(root);
    assert.equal(next.status, 0, next.stderr);
    const now = items(root, names);
    for (const n of names) assert.ok(now[n] === old[n] || now[n] === 'gone', `${JSON.stringify(kill)}: ${n} is half there`);
    assert.deepEqual(leftovers(root), [], JSON.stringify(kill));
  }
});

test('move-many killed after every item or before every rename: each item at its old name or its new one', () => {
  const moves = [{ from: 'a.txt', to: 'moved/a.txt' }, { from: 'd1', to: 'moved/d1' }, { from: 'b.txt', to: 'b2.txt' }];
  const args = ['--op', 'move-many', '--path', '.'];
  const env = batchEnv({ moves });
  const template = world();
  const old = items(template, moves.map((m) => m.from));
  const clean = child(world(), args, env);
  assert.equal(clean.status, 0, clean.stderr);
  const kills = [...clean.steps.map((_, i) => ({ FELIS_TEST_STOP_AT: `${i + 1}:KILL` })), ...moves.map((_, i) => ({ FELIS_TEST_KILL_RENAME: String(i + 1) }))];
  for (const kill of kills) {
    const root = world();
    const r = child(root, args, { ...env, ...kill });
    assert.equal(r.signal, 'SIGKILL', `${JSON.stringify(kill)}: ${r.stderr}`);
    for (const m of moves) {
      const at = items(root, [m.from, m.to]);
      const here = at[m.from] === old[m.from] && at[m.to] === 'gone';
      const there = at[m.from] === 'gone' && at[m.to] === old[m.from];
      assert.ok(here || there, `${JSON.stringify(kill)}: ${m.from} is neither old nor new`);
    }
  }
});

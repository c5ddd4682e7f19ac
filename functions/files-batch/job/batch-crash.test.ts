/**
 * Crash tests of the many-file delete and move: the Job program runs as a real child process
 * (job/journal/crash-child.test-kit.ts) and is killed with SIGKILL after every durable step of the batch,
 * and just before every rename, with the undo trash on and off. After the next op of the world
 * (which recovers it first), the whole tree is exactly the tree before the batch or exactly the
 * tree after it, never a mix, and nothing of the op's own is left; with the trash on, what the
 * batch deleted is in exactly one held record, or (the old tree) in none. The recovery is killed
 * after every one of its own steps too.
 */

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { treeDigest } from '../../../job/archive/forge.test-kit.ts';
import { crashKit } from '../../../job/journal/crash.test-kit.ts';
import { type Batch, encodeBatchEnv } from '../../../lib/protocol/batch-env.ts';
import { UNDO_DIR } from '../../../lib/protocol/working-names.ts';

const { base, child } = crashKit('felis-batch-crash-', { FELIS_TRASH: 'off' });

const batchEnv = (b: Batch) => Object.fromEntries(encodeBatchEnv(b)!.map((v) => [v.name, v.value]));

/** A world whose root holds two files and two folders with contents, and a folder to move into. */
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

/** The world's tree, the undo trash left out (it is checked on its own). */
const digest = (root: string) => treeDigest(root, (rel) => rel === UNDO_DIR);

/** Every record in the trash: its state and each item's path and content digest. */
function records(root: string): { state: string; items: [string, string][] }[] {
  const dir = path.join(root, UNDO_DIR);
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).map((id) => {
    const r = JSON.parse(fs.readFileSync(path.join(dir, id, 'record.json'), 'utf8'));
    const items = r.items.map((i: { path: string; slot: number }) => {
      const p = path.join(dir, id, String(i.slot));
      return [i.path, fs.lstatSync(p).isDirectory() ? treeDigest(p) : fs.readFileSync(p, 'utf8')];
    });
    return { state: r.state, items };
  });
}

/** Any mutation recovers the world first; this one changes nothing else (the path does not exist). */
const nextOp = (root: string, env: Record<string, string> = {}) => child(root, ['--op', 'delete', '--path', 'no-such-file'], env);

interface Case {
  label: string;
  args: string[];
  env: Record<string, string>;
  old: string;
  new: string;
  /** With the trash on, what the one record holds after the batch: each deleted item and its content. */
  held: [string, string][];
  steps: string[];
  renames: number;
}

const DELETED = ['a.txt', 'd1', 'b.txt', 'd2'];
const MOVES = [
  { from: 'a.txt', to: 'moved/a.txt' },
  { from: 'd1', to: 'moved/d1' },
  { from: 'b.txt', to: 'b2.txt' },
];

function makeCase(op: 'delete-many' | 'move-many', trash: 'on' | 'off'): Case {
  const env = { ...batchEnv(op === 'delete-many' ? { paths: DELETED } : { moves: MOVES }), FELIS_TRASH: trash };
  const args = ['--op', op, '--path', '.'];
  const template = world();
  const held: [string, string][] =
    op === 'delete-many' && trash === 'on'
      ? DELETED.map((n) => [n, fs.lstatSync(path.join(template, n)).isDirectory() ? treeDigest(path.join(template, n)) : fs.readFileSync(path.join(template, n), 'utf8')])
      : [];
  const root = world();
  const clean = child(root, args, env);
  assert.equal(clean.status, 0, clean.stderr);
  const done = op === 'delete-many' ? DELETED : MOVES.map((m) => m.from);
  assert.ok(clean.stdout.includes(`FELIS-FILES-RESULT: {"done":${JSON.stringify(done)}`), clean.stdout);
  assert.deepEqual(
    records(root).map((r) => [r.state, r.items]),
    held.length ? [['held', held]] : [],
  );
  const renames = op === 'move-many' ? MOVES.length : DELETED.length * (trash === 'on' ? 2 : 1);
  return { label: `${op} with the trash ${trash}`, args, env, old: digest(template), new: digest(root), held, steps: clean.steps, renames };
}

/** Exactly the old tree and no record, or exactly the new tree and (trash on) the one record holding every deleted item. */
function oldOrNew(c: Case, root: string, why: string): 'old' | 'new' {
  const d = digest(root);
  assert.ok(d === c.old || d === c.new, `${why}: the tree is a mix of old and new`);
  const now = d === c.old ? 'old' : 'new';
  const held = records(root).map((r) => [r.state, r.items]);
  assert.deepEqual(held, now === 'new' && c.held.length ? [['held', c.held]] : [], `${why}: the trash (the tree is ${now})`);
  return now;
}

// A move never puts anything in the trash: one case of it is enough.
const cases = [makeCase('delete-many', 'off'), makeCase('delete-many', 'on'), makeCase('move-many', 'off')];

for (const c of cases) {
  describe(c.label, () => {
    test('a clean run writes every move down, makes them, commits, then cleans up', () => {
      const placing = c.steps.indexOf('state:placing');
      assert.ok(placing > 0, c.steps.join(','));
      assert.deepEqual(c.steps.slice(0, 1), ['state:staging']);
      const moves = c.label.startsWith('delete') ? DELETED.length : MOVES.length;
      assert.deepEqual(c.steps.slice(placing, placing + moves + 2), ['state:placing', ...Array.from({ length: moves }, (_, i) => `move:${i + 1}`), 'state:committed']);
      assert.deepEqual(c.steps.slice(-2), ['work-removed', 'journal-removed']);
    });

    test('SIGKILL after every step, or just before every rename: the next op finds the whole old tree or the whole new one', () => {
      const kills = [
        ...c.steps.map((s, i) => ({ why: `after ${s}`, env: { FELIS_TEST_STOP_AT: `${i + 1}:KILL` } })),
        ...Array.from({ length: c.renames }, (_, i) => ({ why: `before rename ${i + 1}`, env: { FELIS_TEST_KILL_RENAME: String(i + 1) } })),
      ];
      const seen = new Set<string>();
      for (const kill of kills) {
        const root = world();
        const r = child(root, c.args, { ...c.env, ...kill.env });
        assert.equal(r.signal, 'SIGKILL', `${kill.why}: ${r.stderr}`);
        const next = nextOp(root);
        assert.equal(next.status, 0, next.stderr);
        seen.add(oldOrNew(c, root, `killed ${kill.why}`));
      }
      assert.deepEqual([...seen].sort(), ['new', 'old'], 'kills fall both before and after the batch took');
    });

    test('SIGKILL after every step of the recovery too: the op after that still finds old or new', () => {
      // A roll forward with moves still ahead; with the trash, also a commit whose record is half filled.
      const placing = c.steps.indexOf('state:placing') + 1;
      const committed = c.steps.indexOf('state:committed') + 1;
      const points = [placing + 1, ...(c.held.length ? [committed + 2] : [])];
      for (const n of points) {
        const dry = world();
        assert.equal(child(dry, c.args, { ...c.env, FELIS_TEST_STOP_AT: `${n}:KILL` }).signal, 'SIGKILL');
        const recovery = nextOp(dry).steps;
        assert.ok(recovery.length > 0, `after ${c.steps[n - 1]}`);
        oldOrNew(c, dry, `killed after ${c.steps[n - 1]}`);
        for (let m = 1; m <= recovery.length; m++) {
          const root = world();
          assert.equal(child(root, c.args, { ...c.env, FELIS_TEST_STOP_AT: `${n}:KILL` }).signal, 'SIGKILL');
          const r = nextOp(root, { FELIS_TEST_STOP_AT: `${m}:KILL` });
          assert.equal(r.signal, 'SIGKILL', `recovery step ${m}`);
          const last = nextOp(root);
          assert.equal(last.status, 0, last.stderr);
          assert.equal(oldOrNew(c, root, `killed after ${c.steps[n - 1]}, then its recovery after ${recovery[m - 1]}`), 'new');
        }
      }
    });
  });
}

test('the next op names the interrupted batch (its FELIS_OP_ID) and the tree it left', () => {
  const id = '0123456789abcdef';
  const c = cases[1]!;
  for (const [n, now] of [
    [1, 'old'],
    [c.steps.indexOf('state:placing') + 1, 'new'],
  ] as const) {
    const root = world();
    assert.equal(child(root, c.args, { ...c.env, FELIS_OP_ID: id, FELIS_TEST_STOP_AT: `${n}:KILL` }).signal, 'SIGKILL');
    const next = child(root, ['--op', 'delete', '--path', 'no-such-file'], { FELIS_OP_ID: 'fedcba9876543210' });
    assert.equal(next.status, 0, next.stderr);
    assert.ok(next.stdout.split('\n').includes(`FELIS-FILES-RECOVERED: {"op":"${id}","kind":"delete-many","now":"${now}"}`), next.stdout);
    assert.equal(oldOrNew(c, root, `killed after step ${n}`), now);
  }
});

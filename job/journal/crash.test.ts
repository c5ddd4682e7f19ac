/**
 * Crash tests: the Job program runs as a real child process (job/journal/crash-child.test-kit.ts) and is
 * stopped with SIGKILL or SIGTERM right after every durable step of an extraction's placement, and
 * then again at every step of the recovery the next Job makes; the whole tree is hashed before and
 * after, and must be exactly the tree before the extraction or exactly the tree after it.
 */

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { forgeTar, forgeZip, treeDigest } from '../archive/forge.test-kit.ts';
import { crashKit, type Run } from './crash.test-kit.ts';

// The journal's own steps, without the undo trash (job/trash/crash.test.ts kills an overwrite with it).
const { base, child } = crashKit('felis-crash-', { FELIS_TRASH: 'off' });

/** Any mutation recovers first; this one changes nothing else (the path does not exist). */
function nextOp(root: string, env: Record<string, string> = {}): Run {
  return child(root, ['--op', 'delete', '--path', 'no-such-file'], env);
}

function leftovers(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.name.startsWith('.felis-')) out.push(r);
      else if (e.isDirectory()) walk(r);
    }
  };
  walk('');
  return out;
}

interface Case {
  label: string;
  archive: string;
  args: string[];
  template: string;
  old: string;
  new: string;
  /** The steps of a clean run, in order. */
  steps: string[];
  /** The renames a clean run makes. */
  moves: number;
}

const ENTRIES = [
  { name: 'plugins/', data: undefined },
  { name: 'plugins/a.jar', data: 'jar a' },
  { name: 'plugins/b/c.txt', data: 'c' },
  { name: 'config/new.yml', data: 'new: 1\n' },
  { name: 'readme.txt', data: 'read me\n' },
];
const REPLACING = [
  { name: 'config/paper.yml', data: 'paper: new\n' },
  { name: 'server.properties', data: 'motd=new\n' },
];

function makeCase(format: 'zip' | 'tar', overwrite: boolean): Case {
  const label = `${format}${overwrite ? ' with overwrite' : ''}`;
  const template = fs.mkdtempSync(path.join(base, 'template-'));
  fs.mkdirSync(path.join(template, 'config'));
  fs.writeFileSync(path.join(template, 'server.properties'), 'motd=old\n');
  fs.writeFileSync(path.join(template, 'config', 'paper.yml'), 'paper: old\n');
  fs.writeFileSync(path.join(template, 'keep.txt'), 'untouched\n');
  const entries = overwrite ? [...ENTRIES, ...REPLACING] : ENTRIES;
  const archive = `pack.${format}`;
  fs.writeFileSync(
    path.join(template, archive),
    format === 'zip'
      ? forgeZip(entries.map((e) => (e.data === undefined ? { name: e.name } : { name: e.name, data: e.data })))
      : forgeTar(entries.map((e) => (e.data === undefined ? { name: e.name, type: '5' } : { name: e.name, data: e.data }))),
  );
  const args = ['--op', 'unzip', '--path', archive, ...(overwrite ? ['--overwrite'] : [])];
  const old = treeDigest(template);
  const clean = fresh(template);
  const r = child(clean, args);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /FELIS-FILES-RESULT: \{"files":/);
  assert.deepEqual(leftovers(clean), []);
  return { label, archive, args, template, old, new: treeDigest(clean), steps: r.steps, moves: overwrite ? 3 + 2 * REPLACING.length : 3 };
}

function fresh(template: string): string {
  const root = fs.mkdtempSync(path.join(base, 'world-'));
  fs.cpSync(template, root, { recursive: true });
  return root;
}

/** Exactly the tree before the op, or exactly the tree after it; and nothing of the op's own left. */
function oldOrNew(c: Case, root: string, expect: 'old' | 'new', why: string): void {
  assert.deepEqual(leftovers(root), [], `${why}: leftovers`);
  assert.equal(treeDigest(root), expect === 'old' ? c.old : c.new, `${why}: expected the ${expect} tree`);
}

/** Stopped after step n of the op: which tree the world must end up with. */
function expected(c: Case, n: number): 'old' | 'new' {
  return n >= c.steps.indexOf('state:placing') + 1 ? 'new' : 'old';
}

const cases = [makeCase('zip', false), makeCase('zip', true), makeCase('tar', false), makeCase('tar', true)];

for (const c of cases) {
  describe(`placement of a ${c.label} extraction`, () => {
    test('a clean run writes the journal, makes every move, commits and cleans up', () => {
      const moves = Array.from({ length: c.moves }, (_, i) => `move:${i + 1}`);
      assert.deepEqual(c.steps, ['state:staging', 'state:placing', ...moves, 'state:committed', 'work-removed', 'journal-removed']);
    });

    // The same stops as after each step, by another hook: this one also runs the Job program of
    // before the journal (which fails it, leaving the working folder and a mix). Once is enough.
    if (c === cases[1])
      test('SIGKILL just before every rename: the next op finds the old or the new tree', () => {
        for (let n = 1; n <= c.moves; n++) {
          const root = fresh(c.template);
          const r = child(root, c.args, { FELIS_TEST_KILL_RENAME: String(n) });
          assert.equal(r.signal, 'SIGKILL', `rename ${n}: ${r.stderr}`);
          const next = nextOp(root);
          assert.equal(next.status, 0, next.stderr);
          const digest = treeDigest(root);
          assert.ok(digest === c.old || digest === c.new, `killed before rename ${n}: a mix of old and new (${leftovers(root).join(', ')})`);
          assert.deepEqual(leftovers(root), [], `killed before rename ${n}`);
        }
      });

    test('SIGKILL after every step: the next op finds the old or the new tree, never a mix', () => {
      for (let n = 1; n <= c.steps.length; n++) {
        const root = fresh(c.template);
        const r = child(root, c.args, { FELIS_TEST_STOP_AT: `${n}:KILL` });
        assert.equal(r.signal, 'SIGKILL', `step ${n}: ${r.stderr}`);
        assert.equal(r.steps.length, n);
        const next = nextOp(root);
        assert.equal(next.status, 0, next.stderr);
        assert.match(next.stdout, /"code":"not_found"/);
        oldOrNew(c, root, expected(c, n), `killed after ${c.steps[n - 1]}`);
        // The recovery steps the next op took, if any, end with the journal removed.
        if (n < c.steps.length) assert.equal(next.steps.at(-1), 'journal-removed', `after ${c.steps[n - 1]}: ${next.steps.join(',')}`);
      }
    });

    test('SIGTERM after every step: the Job itself ends with the old tree (staging) or finishes and prints its result', () => {
      for (let n = 1; n <= c.steps.length; n++) {
        const root = fresh(c.template);
        const r = child(root, c.args, { FELIS_TEST_STOP_AT: `${n}:TERM` });
        const want = expected(c, n);
        if (want === 'new') {
          assert.equal(r.status, 0, `step ${n}: ${r.stderr}`);
          assert.match(r.stdout, /FELIS-FILES-RESULT: \{"files":/);
        } else {
          assert.equal(r.status, 1, `step ${n}: ${r.stdout}`);
          assert.match(r.stderr, /stopped by a signal before anything was placed; nothing was changed/);
          assert.doesNotMatch(r.stdout, /FELIS-FILES-RESULT/);
        }
        oldOrNew(c, root, want, `SIGTERM after ${c.steps[n - 1]}`);
      }
    });

    test('SIGTERM while extracting ends the Job at once with the old tree', () => {
      const root = fresh(c.template);
      const r = child(root, c.args, { FELIS_TEST_STOP_AT: 'progress:TERM' });
      assert.equal(r.status, 1, r.stdout);
      assert.match(r.stderr, /stopped by a signal before anything was placed/);
      assert.deepEqual(r.steps, ['state:staging', 'work-removed', 'journal-removed']);
      oldOrNew(c, root, 'old', 'SIGTERM while extracting');
    });

    // Recovery is the same code whatever the format: run it for the cases with asides in their moves.
    if (c.moves > 3)
      test('SIGKILL after every step of the recovery too: the next op after that still finds old or new', () => {
        // Recovery of each kind: all moves ahead (just placing), half of them, none (committed).
        const placing = c.steps.indexOf('state:placing') + 1;
        const points = [placing, placing + Math.ceil(c.moves / 2), c.steps.indexOf('state:committed') + 1];
        for (const n of points) {
          const dry = fresh(c.template);
          assert.equal(child(dry, c.args, { FELIS_TEST_STOP_AT: `${n}:KILL` }).signal, 'SIGKILL');
          const recovery = nextOp(dry).steps;
          assert.ok(recovery.length > 0);
          for (let m = 1; m <= recovery.length; m++) {
            const root = fresh(c.template);
            assert.equal(child(root, c.args, { FELIS_TEST_STOP_AT: `${n}:KILL` }).signal, 'SIGKILL');
            const r = nextOp(root, { FELIS_TEST_STOP_AT: `${m}:KILL` });
            assert.equal(r.signal, 'SIGKILL', `recovery step ${m}`);
            const last = nextOp(root);
            assert.equal(last.status, 0, last.stderr);
            oldOrNew(c, root, expected(c, n), `killed after ${c.steps[n - 1]}, then its recovery after ${recovery[m - 1]}`);
          }
        }
      });
  });
}

describe('a placement that fails and rolls back', () => {
  const c = cases[1]; // zip with overwrite: asides and moves in
  test('a failed move is undone in the Job; SIGKILL after every step of that undo, and of its recovery, still ends with the old tree', () => {
    // The second move failing (one to undo) and the last (all the others to undo).
    for (const k of [2, c.moves]) {
      const dry = fresh(c.template);
      const r0 = child(dry, c.args, { FELIS_TEST_FAIL_RENAME: String(k) });
      assert.equal(r0.status, 1, r0.stdout);
      assert.match(r0.stderr, /injected EIO/);
      oldOrNew(c, dry, 'old', `rename ${k} failed`);
      const undoFrom = r0.steps.indexOf('state:undoing') + 1;
      assert.ok(undoFrom > 0, r0.steps.join(','));
      for (let n = undoFrom; n < r0.steps.length; n++) {
        const root = fresh(c.template);
        const r = child(root, c.args, { FELIS_TEST_FAIL_RENAME: String(k), FELIS_TEST_STOP_AT: `${n}:KILL` });
        assert.equal(r.signal, 'SIGKILL');
        // Kill the recovery after its first step as well, then let the next op finish it.
        const r2 = nextOp(root, { FELIS_TEST_STOP_AT: '1:KILL' });
        if (r2.signal !== 'SIGKILL') assert.equal(r2.status, 0, r2.stderr);
        const last = nextOp(root);
        assert.equal(last.status, 0, last.stderr);
        oldOrNew(c, root, 'old', `rename ${k} failed, killed after ${r.steps[n - 1]}`);
      }
    }
  });
});

describe('what recovery reports', () => {
  const c = cases[0];
  test('the next op names the interrupted op (its FELIS_OP_ID) and the tree it left, before its own result', () => {
    const id = '0123456789abcdef';
    const placing = c.steps.indexOf('state:placing') + 1;
    for (const [n, now] of [
      [1, 'old'],
      [placing, 'new'],
    ] as const) {
      const root = fresh(c.template);
      const r = child(root, c.args, { FELIS_OP_ID: id, FELIS_TEST_STOP_AT: `${n}:KILL` });
      assert.equal(r.signal, 'SIGKILL');
      const next = child(root, ['--op', 'delete', '--path', 'no-such-file'], { FELIS_OP_ID: 'fedcba9876543210' });
      assert.equal(next.status, 0, next.stderr);
      const line = `FELIS-FILES-RECOVERED: {"op":"${id}","kind":"unzip","now":"${now}"}`;
      const lines = next.stdout.split('\n');
      assert.ok(lines.includes(line), next.stdout);
      assert.ok(lines.lastIndexOf(line) < lines.findIndex((l) => l.startsWith('FELIS-FILES-RESULT: ')), 'said before the result');
      oldOrNew(c, root, now, `killed after step ${n}`);
      // Said once: the op after that finds nothing to recover.
      assert.doesNotMatch(nextOp(root).stdout, /FELIS-FILES-RECOVERED/);
    }
  });

  test('a SIGTERM while staging says, in its own log, that nothing of it was placed', () => {
    const id = '0123456789abcdef';
    const root = fresh(c.template);
    const r = child(root, c.args, { FELIS_OP_ID: id, FELIS_TEST_STOP_AT: '1:TERM' });
    assert.equal(r.status, 1, r.stdout);
    assert.ok(r.stdout.split('\n').includes(`FELIS-FILES-RECOVERED: {"op":"${id}","kind":"unzip","now":"old"}`), r.stdout);
    oldOrNew(c, root, 'old', 'stopped while staging');
  });
});

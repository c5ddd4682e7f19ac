import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { treeDigest } from '../archive/forge.test-kit.ts';
import { makeWorld, type World } from '../testing/world.ts';
import { WorldRoot } from '../volume/root.ts';
import { Journal, type JournalHooks } from './journal.ts';
import { recoverAll } from './recover.ts';

const hooks: JournalHooks = { rename: fs.renameSync, fsync: fs.fsyncSync, syncfs: () => {} };
const WORK = '.felis-unzip-0123456789ab';

/**
 * A journal in state `placing` that moves `<work>/new/n.txt` to `n.txt` in `sub`: what a Job
 * killed right after sealing it leaves (with the move made, when `made`).
 */
function placingJournal(w: World, opts: { made?: boolean } = {}): string {
  fs.mkdirSync(w.p(`sub/${WORK}/new`), { recursive: true });
  fs.writeFileSync(w.p(`sub/${WORK}/new/n.txt`), 'new');
  const root = WorldRoot.open(w.root);
  const sub = root.openDir('sub');
  try {
    // A throw at the `placing` step stands for the kill: it leaves before the first move.
    const j = Journal.begin(root.fd, sub, 'unzip', WORK, 'fedcba987654', {
      ...hooks,
      step: (s) => {
        if (s === 'state:placing') throw new Error('stopped');
      },
    });
    j.add(['in', `${WORK}/new/n.txt`, 'n.txt']);
    assert.throws(() => j.place(), /stopped/);
    assert.equal(j.state, 'placing');
    if (opts.made) fs.renameSync(w.p(`sub/${WORK}/new/n.txt`), w.p('sub/n.txt'));
    return j.name;
  } finally {
    fs.closeSync(sub);
    root.close();
  }
}

function recover(w: World) {
  const root = WorldRoot.open(w.root);
  try {
    return recoverAll(root, hooks);
  } finally {
    root.close();
  }
}

test('a journal left placing is rolled forward, whether its move was made or not, and goes', () => {
  for (const made of [false, true]) {
    const w = makeWorld();
    const name = placingJournal(w, { made });
    assert.equal(fs.existsSync(w.p('sub/n.txt')), made);
    const r = recover(w);
    assert.deepEqual(
      r.map((x) => [x.journal, x.was, x.now]),
      [[name, 'placing', 'new']],
    );
    assert.equal(fs.readFileSync(w.p('sub/n.txt'), 'utf8'), 'new');
    assert.deepEqual(fs.readdirSync(w.p('sub')), ['n.txt']);
    assert.equal(fs.existsSync(w.p(name)), false);
    assert.deepEqual(recover(w), []);
  }
});

test('a journal whose staged source is gone, or whose target is taken, is rolled back instead', () => {
  const w = makeWorld();
  const name = placingJournal(w);
  fs.writeFileSync(w.p('sub/n.txt'), 'someone else');
  const before = treeDigest(w.p('sub'), (r) => r.startsWith('.felis-'));
  assert.deepEqual(
    recover(w).map((x) => x.now),
    ['old'],
  );
  assert.equal(treeDigest(w.p('sub')), before);
  assert.equal(fs.existsSync(w.p(name)), false);
});

test('a journal that is not ours is never acted on: a move out of the world or out of its working folder, a bad header', () => {
  const w = makeWorld();
  const name = placingJournal(w);
  const header = JSON.parse(fs.readFileSync(w.p(`${name}/journal.json`), 'utf8'));
  const world = () => treeDigest(w.base, (r) => r.startsWith(`root/${name}`));
  const before = world();
  const forged: [string, unknown][] = [
    ['moves-0.json', [['in', `${WORK}/new/n.txt`, '../../outside/x']]],
    ['moves-0.json', [['aside', 'config/paper.yml', 'elsewhere/0']]],
    ['moves-0.json', [['in', 'config/paper.yml', 'x']]],
    ['moves-0.json', [['in', `${WORK}/new/./n.txt`, 'n.txt']]],
    ['moves-0.json', [['in', `${WORK}/old/0`, 'stolen.txt']]],
    ['moves-0.json', [['aside', 'config/paper-global.yml', `${WORK}/new/x`]]],
    ['journal.json', { ...header, base: '../outside' }],
    ['journal.json', { ...header, work: 'config' }],
    ['journal.json', { ...header, state: 'done' }],
  ];
  for (const [file, body] of forged) {
    const original = fs.readFileSync(w.p(`${name}/${file}`));
    fs.writeFileSync(w.p(`${name}/${file}`), JSON.stringify(body));
    assert.deepEqual(recover(w), [], `${file}: ${JSON.stringify(body)}`);
    assert.equal(world(), before, `${file}: ${JSON.stringify(body)}`);
    fs.writeFileSync(w.p(`${name}/${file}`), original);
  }
  // Written by someone else (the game's uid), or group-writable: not ours either.
  fs.chownSync(w.p(`${name}/moves-0.json`), 1000, 1000);
  assert.deepEqual(recover(w), []);
  fs.chownSync(w.p(`${name}/moves-0.json`), process.geteuid!(), process.getegid!());
  fs.chmodSync(w.p(`${name}/journal.json`), 0o620);
  assert.deepEqual(recover(w), []);
  fs.chmodSync(w.p(`${name}/journal.json`), 0o600);
  fs.writeFileSync(w.p(`${name}/journal.json`), '{not json');
  assert.deepEqual(recover(w), []);
  assert.equal(world(), before);
});

test('a journal whose base folder is gone is removed; one whose base is another folder now stops the op', () => {
  const w = makeWorld();
  const name = placingJournal(w);
  fs.renameSync(w.p('sub'), path.join(w.outside, 'sub'));
  fs.mkdirSync(w.p('sub'));
  assert.throws(() => recover(w), /names a folder that has been replaced; it was left as it is/);
  assert.ok(fs.existsSync(w.p(name)));
  fs.rmdirSync(w.p('sub'));
  assert.deepEqual(
    recover(w).map((x) => x.now),
    ['gone'],
  );
  assert.equal(fs.existsSync(w.p(name)), false);
});

test('every mutation recovers first; a read does not', async () => {
  const w = makeWorld();
  const name = placingJournal(w);
  assert.equal((await w.run({ op: 'list', path: '' })).code, undefined);
  assert.ok(fs.existsSync(w.p(name)));
  assert.equal((await w.run({ op: 'mkdir', path: 'made' })).code, undefined);
  assert.equal(fs.existsSync(w.p(name)), false);
  assert.equal(fs.readFileSync(w.p('sub/n.txt'), 'utf8'), 'new');
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { makeWorld, snapshot, TRASH_ON, tree, type World } from '../../../job/testing/world.ts';
import { removeStaleTrash } from '../../../job/volume/batch-trash.ts';
import { LEDGER_DIR, UNDO_DIR } from '../../../lib/protocol/working-names.ts';

const del = (w: World, paths: string[]) => w.run({ op: 'delete-many', path: '.', batch: { paths } });

function filled(): World {
  const w = makeWorld();
  fs.mkdirSync(w.p('logs/old'), { recursive: true });
  for (let i = 0; i < 5; i++) fs.writeFileSync(w.p(`logs/${i}.log`), `log ${i}`);
  fs.writeFileSync(w.p('logs/old/a.log'), 'a');
  fs.symlinkSync('../config', w.p('logs/cfg-link'));
  fs.symlinkSync(w.outside, w.p('logs/out'));
  return w;
}

test('delete-many removes files, links (not their targets) and folders, and lists them done in order', async () => {
  const w = filled();
  const r = await del(w, ['logs/0.log', 'logs/cfg-link', 'logs/old', 'logs/4.log']);
  assert.deepEqual(r, { done: ['logs/0.log', 'logs/cfg-link', 'logs/old', 'logs/4.log'], failed: [] });
  assert.deepEqual(tree(w.p('logs')), ['1.log', '2.log', '3.log', 'out@']);
  assert.equal(fs.readFileSync(w.p('config/paper.yml'), 'utf8'), 'paper: true\n');
});

test('delete-many: the first bad item is refused with its code and path, and nothing changed', async () => {
  const cases: Array<[string[], string, string]> = [
    [['logs/0.log', '../outside/secret.txt'], 'bad_path', '../outside/secret.txt'],
    [['logs/0.log', 'logs/out/secret.txt'], 'bad_path', 'logs/out/secret.txt'],
    [['logs/0.log', '.'], 'bad_path', '.'],
    [['logs/0.log', 'logs/nope', '../x'], 'not_found', 'logs/nope'],
    [['logs/1.log', 'logs/.felis-edit-0123456789ab'], 'not_found', 'logs/.felis-edit-0123456789ab'],
    [['logs/1.log', 'logs/2.log', 'logs//1.log'], 'batch_conflict', 'logs//1.log'],
    // The same entry through a link to its folder is the same item.
    [['config/paper.yml', 'logs/cfg-link/paper.yml'], 'batch_conflict', 'logs/cfg-link/paper.yml'],
  ];
  for (const [paths, code, path] of cases) {
    const w = filled();
    const before = snapshot(w.root);
    const r = await del(w, paths);
    assert.equal(r.code, code, paths.join(' '));
    assert.equal(r.entry, path, paths.join(' '));
    assert.ok(r.error, 'a message');
    assert.deepEqual(snapshot(w.root), before, `nothing changed: ${paths.join(' ')}`);
  }
});

test('delete-many: the withheld file with other links is refused (withheld_linked), as a single delete is', async () => {
  const w = filled();
  fs.linkSync(w.p('config/paper-global.yml'), w.p('logs/hard'));
  const before = snapshot(w.root);
  const r = await del(w, ['logs/1.log', 'config']);
  assert.equal(r.code, 'withheld_linked');
  assert.equal(r.entry, 'config');
  assert.deepEqual(snapshot(w.root), before);
});

test('delete-many: a path inside a folder the batch also deletes is allowed and done', async () => {
  const w = filled();
  for (const paths of [
    ['logs/old/a.log', 'logs/old'],
    ['logs/old', 'logs/old/a.log'],
  ]) {
    fs.mkdirSync(w.p('logs/old'), { recursive: true });
    fs.writeFileSync(w.p('logs/old/a.log'), 'a');
    assert.deepEqual(await del(w, paths), { done: paths, failed: [] });
    assert.equal(fs.existsSync(w.p('logs/old')), false);
  }
});

test('delete-many moves every item aside into one working folder at the root, written down first, which leaves nothing behind', async () => {
  const w = filled();
  const renames: string[] = [];
  const steps: string[] = [];
  const r = await w.run(
    { op: 'delete-many', path: 'logs', batch: { paths: ['logs/old', 'logs/0.log'] } },
    {
      rename: (from, to) => {
        renames.push(to.replace(/.*\/(\.felis-unzip-[0-9a-f]{12})\//, '$1/'));
        fs.renameSync(from, to);
      },
      journalStep: (s) => void steps.push(s),
    },
  );
  assert.deepEqual(r, { done: ['logs/old', 'logs/0.log'], failed: [] });
  assert.equal(renames.length, 2);
  assert.match(renames[0]!, /^\.felis-unzip-[0-9a-f]{12}\/old\/0$/);
  assert.match(renames[1]!, /^\.felis-unzip-[0-9a-f]{12}\/old\/1$/);
  // Both moves are written down before the first is made, and committed before anything is removed.
  assert.deepEqual(steps, ['state:staging', 'state:placing', 'move:1', 'move:2', 'state:committed', 'work-removed', 'journal-removed']);
  assert.deepEqual(
    fs.readdirSync(w.root).filter((n) => n.startsWith('.felis-') && n !== LEDGER_DIR),
    [],
  );
  assert.deepEqual(
    fs.readdirSync(w.p('logs')).filter((n) => n.startsWith('.felis-')),
    [],
  );
});

test("delete-many: a rename the disk refuses undoes the batch: refused with that item's code and path, nothing changed", async () => {
  const w = filled();
  const before = snapshot(w.root);
  let n = 0;
  const r = await w.run(
    { op: 'delete-many', path: '.', batch: { paths: ['logs/0.log', 'logs/old', 'logs/1.log'] } },
    {
      rename: (from, to) => {
        if (++n === 2) throw Object.assign(new Error('injected'), { code: 'ENOSPC' });
        fs.renameSync(from, to);
      },
    },
  );
  assert.deepEqual(r, { code: 'no_space', error: "the server's volume is full; logs/old was left unchanged; nothing of the batch was changed", entry: 'logs/old' });
  assert.equal(n, 3, 'the first move was undone');
  assert.deepEqual(snapshot(w.root), before);
});

test('delete-many whose journal cannot be written (a full volume) removes item by item, as before the journal', async () => {
  const w = filled();
  const refused: string[] = [];
  const r = await w.run(
    { op: 'delete-many', path: '.', batch: { paths: ['logs/0.log', 'logs/old'] } },
    {
      fsync: (fd) => {
        // The journal is written first: its file's fsync is the op's first, and fails.
        if (refused.length === 0) {
          refused.push(fs.readlinkSync(`/proc/self/fd/${fd}`));
          throw Object.assign(new Error('injected'), { code: 'ENOSPC' });
        }
        fs.fsyncSync(fd);
      },
    },
  );
  assert.match(refused[0] ?? '', /\/\.felis-unzip-[0-9a-f]{12}\/journal\.json\.tmp$/);
  assert.deepEqual(r, { done: ['logs/0.log', 'logs/old'], failed: [] });
  assert.equal(fs.existsSync(w.p('logs/old')), false);
  assert.deepEqual(
    fs.readdirSync(w.root).filter((n) => n.startsWith('.felis-') && n !== LEDGER_DIR),
    [],
    'the journal that could not be written is gone',
  );
  assert.deepEqual(
    fs.readdirSync(w.p('logs')).filter((n) => n.startsWith('.felis-')),
    [],
  );
});

test('delete-many with the trash on: every item in one record, whose id is answered; nothing of the journal left', async () => {
  const w = filled();
  const r = await w.run({ op: 'delete-many', path: '.', batch: { paths: ['logs/0.log', 'logs/old', 'logs/old/a.log', 'logs/cfg-link'] } }, { trash: TRASH_ON });
  assert.deepEqual(r.done, ['logs/0.log', 'logs/old', 'logs/old/a.log', 'logs/cfg-link']);
  assert.match(r.trash_id ?? '', /^[0-9a-f]{16}$/);
  const records = fs.readdirSync(w.p(UNDO_DIR));
  assert.deepEqual(records, [r.trash_id]);
  const record = JSON.parse(fs.readFileSync(w.p(`${UNDO_DIR}/${r.trash_id}/record.json`), 'utf8'));
  assert.equal(record.state, 'held');
  assert.equal(record.actor, 'alice');
  // What is inside a deleted folder goes with it, in its slot.
  assert.deepEqual(
    record.items.map((i: { path: string; slot: number }) => [i.path, i.slot]),
    [
      ['logs/0.log', 0],
      ['logs/old', 1],
      ['logs/cfg-link', 2],
    ],
  );
  assert.equal(fs.readFileSync(w.p(`${UNDO_DIR}/${r.trash_id}/1/a.log`), 'utf8'), 'a');
  assert.deepEqual(
    fs.readdirSync(w.root).filter((n) => n.startsWith('.felis-') && n !== UNDO_DIR && n !== LEDGER_DIR),
    [],
  );
});

test('stale trash is removed by the next sweep, only when it is ours', async () => {
  const w = filled();
  const ours = w.p('logs/.felis-trash-0123456789ab');
  fs.mkdirSync(`${ours}/old/deep`, { recursive: true, mode: 0o700 });
  fs.chmodSync(ours, 0o700);
  fs.writeFileSync(`${ours}/old/deep/x`, 'x');
  const notOurs = w.p('logs/.felis-trash-ba9876543210');
  fs.mkdirSync(notOurs, { mode: 0o755 });
  fs.chmodSync(notOurs, 0o755);
  // The next mutation in the folder clears what is ours.
  assert.deepEqual(await w.run({ op: 'delete', path: 'logs/0.log' }), {});
  assert.equal(fs.existsSync(ours), false);
  assert.equal(fs.existsSync(notOurs), true);
  const fd = fs.openSync(w.p('logs'), 'r');
  try {
    assert.equal(removeStaleTrash(fd), 0);
  } finally {
    fs.closeSync(fd);
  }
});

test('the program reads the items from FELIS_BATCH_*; without them it is a wiring mistake (exit 2)', async () => {
  const { runCli } = await import('../../../job/cli.ts');
  const { encodeBatchEnv } = await import('../../../lib/protocol/batch-env.ts');
  const w = filled();
  const out: string[] = [];
  const err: string[] = [];
  const io = { stdout: (t: string) => void out.push(t), stderr: (t: string) => void err.push(t) };
  const args = ['files', '--op', 'delete-many', '--path', 'logs', '--worlds-root', w.root];
  assert.equal(await runCli(args, {}, io), 2);
  assert.match(err.join(''), /FELIS_BATCH_PARTS/);
  const env = Object.fromEntries(encodeBatchEnv({ paths: ['logs/0.log', 'logs/1.log'] })!.map((v) => [v.name, v.value]));
  assert.equal(await runCli(args, env, io), 0);
  // The trash is on when the env says nothing: the record's id is answered beside the items.
  assert.match(out.join(''), /FELIS-FILES-RESULT: \{"done":\["logs\/0.log","logs\/1.log"\],"trash_id":"[0-9a-f]{16}"\}\n/);
  assert.equal(fs.existsSync(w.p('logs/0.log')), false);
});

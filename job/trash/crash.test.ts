/**
 * Crash tests of the undo trash: the Job program runs as a real child process
 * (job/journal/crash-child.test-kit.ts) and is killed with SIGKILL after every durable step of a delete, a
 * many-file delete, an overwrite, a restore and a purge, and just before every rename. After the next
 * mutation of the world (which settles what the killed one left), every path is where it was, with
 * what it held, or in the trash under a held record — never gone, never both.
 */

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { encodeBatchEnv } from '../../lib/protocol/batch-env.ts';
import { encodeContentEnv } from '../../lib/protocol/content-env.ts';
import { UNDO_DIR } from '../../lib/protocol/working-names.ts';
import { forgeZip, treeDigest } from '../archive/forge.test-kit.ts';
import { crashKit } from '../journal/crash.test-kit.ts';
import { sha256 } from '../testing/world.ts';

const kit = crashKit('felis-trash-crash-', { FELIS_TRASH: 'on', FELIS_ACTOR: 'crash-test' });
const base = kit.base;

function child(root: string, args: string[], env: Record<string, string> = {}) {
  const r = kit.child(root, args, env);
  const m = /"trash_id":"([0-9a-f]{16})"/.exec(r.stdout);
  return { ...r, trashId: m?.[1] };
}

const envOf = (vars: { name: string; value: string }[]) => Object.fromEntries(vars.map((v) => [v.name, v.value]));

/** A world of two files and two folders with contents. */
function world(): string {
  const root = fs.mkdtempSync(path.join(base, 'world-'));
  fs.writeFileSync(path.join(root, 'a.txt'), 'a');
  fs.writeFileSync(path.join(root, 'server.properties'), 'motd=old\n');
  for (const d of ['d1', 'd2']) {
    fs.mkdirSync(path.join(root, d, 'sub'), { recursive: true });
    for (let i = 0; i < 10; i++) fs.writeFileSync(path.join(root, d, 'sub', `${i}.dat`), `${d} ${i}`);
  }
  return root;
}

function digestOf(p: string): string | null {
  if (!fs.existsSync(p) && !isLink(p)) return null;
  const st = fs.lstatSync(p);
  return st.isDirectory() ? treeDigest(p) : st.isFile() ? sha256(fs.readFileSync(p)) : `link:${fs.readlinkSync(p)}`;
}
function isLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

interface Held {
  id: string;
  path: string;
  digest: string | null;
}

/** Every item of every record, read straight from the volume; a record not `held` fails the test. */
function trashOf(root: string): Held[] {
  const dir = path.join(root, UNDO_DIR);
  if (!fs.existsSync(dir)) return [];
  const out: Held[] = [];
  for (const id of fs.readdirSync(dir)) {
    assert.match(id, /^[0-9a-f]{16}$/, `only records are left in the trash: ${id}`);
    const r = JSON.parse(fs.readFileSync(path.join(dir, id, 'record.json'), 'utf8'));
    assert.equal(r.state, 'held', `record ${id} is settled`);
    const slots = fs
      .readdirSync(path.join(dir, id))
      .filter((n) => n !== 'record.json')
      .sort();
    assert.deepEqual(slots, r.items.map((i: { slot: number }) => String(i.slot)).sort(), `record ${id} holds exactly its slots`);
    for (const item of r.items) out.push({ id, path: item.path, digest: digestOf(path.join(dir, id, String(item.slot))) });
  }
  return out;
}

/** The next mutation settles what a stopped Job left (it changes nothing else: the path is new). */
let settled = 0;
function settle(root: string): void {
  const r = child(root, ['--op', 'mkdir', '--path', `settled-${++settled}`]);
  assert.equal(r.status, 0, r.stderr);
}

/** Every kill: after each step of a clean run, and just before each rename. */
function kills(clean: { steps: string[] }, renames: number): Record<string, string>[] {
  return [...clean.steps.map((_, i) => ({ FELIS_TEST_STOP_AT: `${i + 1}:KILL` })), ...Array.from({ length: renames }, (_, i) => ({ FELIS_TEST_KILL_RENAME: String(i + 1) }))];
}

/**
 * For each path: exactly where it was with what it held, or gone from there and in the trash exactly
 * once with what it held. Returns which for each.
 */
function whereabouts(root: string, before: Record<string, string | null>): Record<string, 'there' | 'trash'> {
  const trash = trashOf(root);
  const out: Record<string, 'there' | 'trash'> = {};
  for (const [p, digest] of Object.entries(before)) {
    const now = digestOf(path.join(root, p));
    const kept = trash.filter((t) => t.path === p);
    if (now !== null) {
      assert.equal(now, digest, `${p} is whole where it was`);
      assert.equal(kept.length, 0, `${p} is not also in the trash`);
      out[p] = 'there';
    } else {
      assert.equal(kept.length, 1, `${p} is gone, so it is in the trash once`);
      assert.equal(kept[0]!.digest, digest, `${p} is whole in the trash`);
      out[p] = 'trash';
    }
  }
  return out;
}

test('a delete and a many-file delete killed at every step: each path where it was or in the trash with its record', () => {
  const cases: { args: string[]; env: Record<string, string>; paths: string[] }[] = [
    { args: ['--op', 'delete', '--path', 'd1'], env: {}, paths: ['d1'] },
    { args: ['--op', 'delete-many', '--path', '.'], env: envOf(encodeBatchEnv({ paths: ['a.txt', 'd1', 'server.properties', 'd2'] })!), paths: ['a.txt', 'd1', 'server.properties', 'd2'] },
  ];
  for (const c of cases) {
    const template = world();
    const before = Object.fromEntries(c.paths.map((p) => [p, digestOf(path.join(template, p))]));
    const clean = child(world(), c.args, c.env);
    assert.equal(clean.status, 0, clean.stderr);
    assert.ok(clean.steps.includes('trash:held'), clean.steps.join(','));
    for (const kill of kills(clean, c.paths.length)) {
      const root = world();
      const r = child(root, c.args, { ...c.env, ...kill });
      assert.equal(r.signal, 'SIGKILL', `${JSON.stringify(kill)}: ${r.stderr}`);
      settle(root);
      whereabouts(root, before);
    }
  }
});

test('an overwrite killed at every step: the old content is at its name or in the trash, and the name holds the old or the new', () => {
  const fresh = Buffer.from('motd=new\n');
  const args = ['--op', 'write', '--path', 'server.properties', '--sha256', sha256(fresh)];
  const env = envOf(encodeContentEnv(fresh));
  const clean = child(world(), args, env);
  assert.equal(clean.status, 0, clean.stderr);
  assert.match(clean.stdout, /"trash_id":"[0-9a-f]{16}"/);
  let landed = 0;
  for (const kill of kills(clean, 0)) {
    const root = world();
    const r = child(root, args, { ...env, ...kill });
    assert.equal(r.signal, 'SIGKILL', `${JSON.stringify(kill)}: ${r.stderr}`);
    settle(root);
    const now = fs.readFileSync(path.join(root, 'server.properties'), 'utf8');
    const trash = trashOf(root);
    if (now === 'motd=old\n') {
      assert.deepEqual(trash, [], `${JSON.stringify(kill)}: nothing replaced, nothing kept`);
    } else {
      assert.equal(now, 'motd=new\n');
      assert.deepEqual(
        trash.map((t) => [t.path, t.digest]),
        [['server.properties', sha256('motd=old\n')]],
        JSON.stringify(kill),
      );
      landed++;
    }
  }
  assert.ok(landed > 0, 'some kills come after the new content landed');
});

test('a restore killed at every step is all or nothing: everything back and no record, or everything in the trash under it', () => {
  const paths = ['a.txt', 'd1', 'd2'];
  const template = world();
  const before = Object.fromEntries(paths.map((p) => [p, digestOf(path.join(template, p))]));
  const deleted = () => {
    const root = world();
    const d = child(root, ['--op', 'delete-many', '--path', '.'], envOf(encodeBatchEnv({ paths })!));
    assert.equal(d.status, 0, d.stderr);
    return { root, id: d.trashId! };
  };
  const first = deleted();
  const clean = child(first.root, ['--op', 'trash-restore', '--path', '', '--trash-id', first.id]);
  assert.equal(clean.status, 0, clean.stderr);
  assert.match(clean.stdout, /"restored":\["a.txt","d1","d2"\]/);
  const outcomes = new Set<string>();
  for (const kill of kills(clean, paths.length)) {
    const { root, id } = deleted();
    const r = child(root, ['--op', 'trash-restore', '--path', '', '--trash-id', id], kill);
    assert.equal(r.signal, 'SIGKILL', `${JSON.stringify(kill)}: ${r.stderr}`);
    settle(root);
    const where = new Set(Object.values(whereabouts(root, before)));
    assert.equal(where.size, 1, `${JSON.stringify(kill)}: all or nothing, not ${[...where]}`);
    outcomes.add([...where][0]!);
  }
  assert.deepEqual([...outcomes].sort(), ['there', 'trash'], 'kills fall both before and after the restore took');
});

test('a purge killed at every step leaves the record whole or gone, never half listed', () => {
  const make = () => {
    const root = world();
    const d = child(root, ['--op', 'delete', '--path', 'd1']);
    assert.equal(d.status, 0, d.stderr);
    return { root, id: d.trashId! };
  };
  const first = make();
  const clean = child(first.root, ['--op', 'trash-purge', '--path', '', '--trash-id', first.id]);
  assert.equal(clean.status, 0, clean.stderr);
  assert.ok(clean.steps.includes('trash:purge-aside'), clean.steps.join(','));
  for (const kill of kills(clean, 1)) {
    const { root, id } = make();
    const r = child(root, ['--op', 'trash-purge', '--path', '', '--trash-id', id], kill);
    assert.equal(r.signal, 'SIGKILL', `${JSON.stringify(kill)}: ${r.stderr}`);
    settle(root);
    const left = trashOf(root);
    assert.ok(left.length === 0 || (left.length === 1 && left[0]!.id === id && left[0]!.digest === digestOf(path.join(world(), 'd1'))), JSON.stringify(kill));
    assert.deepEqual(
      fs.readdirSync(path.join(root, UNDO_DIR)).filter((n) => !/^[0-9a-f]{16}$/.test(n)),
      [],
      'nothing half purged is left',
    );
  }
});

test('an extraction with overwrite killed at every step: each replaced file holds the old or the new, and the old is kept whenever the new landed', () => {
  const archive = forgeZip([
    { name: 'server.properties', data: 'motd=new\n' },
    { name: 'd1/sub/0.dat', data: 'new 0' },
    { name: 'fresh.txt', data: 'fresh' },
  ]);
  const make = () => {
    const root = world();
    fs.writeFileSync(path.join(root, 'pack.zip'), archive);
    return root;
  };
  const args = ['--op', 'unzip', '--path', 'pack.zip', '--overwrite'];
  const clean = child(make(), args);
  assert.equal(clean.status, 0, clean.stderr);
  assert.ok(clean.steps.includes('trash:held'), clean.steps.join(','));
  const replaced = { 'server.properties': ['motd=old\n', 'motd=new\n'], 'd1/sub/0.dat': ['d1 0', 'new 0'] };
  let kept = 0;
  for (const kill of kills(clean, 0)) {
    const root = make();
    const r = child(root, args, kill);
    assert.equal(r.signal, 'SIGKILL', `${JSON.stringify(kill)}: ${r.stderr}`);
    settle(root);
    const trash = trashOf(root);
    for (const [p, [oldText, newText]] of Object.entries(replaced)) {
      const now = fs.readFileSync(path.join(root, p), 'utf8');
      const inTrash = trash.filter((t) => t.path === p);
      if (now === oldText) assert.equal(inTrash.length, 0, `${JSON.stringify(kill)}: ${p} unreplaced, nothing kept`);
      else {
        assert.equal(now, newText, `${JSON.stringify(kill)}: ${p}`);
        assert.deepEqual(
          inTrash.map((t) => t.digest),
          [sha256(oldText!)],
          `${JSON.stringify(kill)}: the old ${p} is kept once`,
        );
        kept++;
      }
    }
  }
  assert.ok(kept > 0, 'some kills come after the placement');
});

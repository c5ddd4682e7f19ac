import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { type FollowedLine, follow } from './follow.ts';
import { cutMark } from './last-lines.ts';

function dir() {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-follow-'));
  after(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}
const byName = (file: string) => ({
  open: () => fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW),
  stat: () => {
    try {
      const st = fs.statSync(file, { bigint: true });
      return { ino: st.ino, size: st.size };
    } catch {
      return null;
    }
  },
});

/**
 * Runs a follow, stepping the world between polls: `steps[i]` runs before poll i+1 (the sleep is
 * the test's), and the follow ends after the last step's poll.
 */
async function followWith(file: string, from: { ino?: bigint; offset: number }, steps: Array<() => void>, o: { maxLine?: number; block?: number } = {}) {
  const ctl = new AbortController();
  let i = 0;
  const sleep = async () => {
    if (i < steps.length) steps[i++]!();
    else ctl.abort();
  };
  const got: FollowedLine[] = [];
  for await (const l of follow(byName(file), { from, pollMs: 0, maxLine: o.maxLine ?? 1024, block: o.block ?? 7, signal: ctl.signal, sleep })) got.push(l);
  return got;
}

test('lines appended after the offset, each once, in order; a line is sent only once it has ended', async () => {
  const d = dir();
  const f = path.join(d, 'latest.log');
  fs.writeFileSync(f, 'old 1\nold 2\n');
  const size = fs.statSync(f).size;
  const got = await followWith(f, { offset: size }, [() => fs.appendFileSync(f, 'new 1\nnew '), () => fs.appendFileSync(f, '2\r\nnew 3\n'), () => {}]);
  assert.deepEqual(
    got.map((g) => g.line),
    ['new 1', 'new 2', 'new 3'],
  );
  const ino = fs.statSync(f, { bigint: true }).ino;
  assert.equal(got[0]!.id, `${ino}:${size + 6}`, 'the id is the inode and the offset the line ends at');
  assert.equal(got[2]!.id, `${ino}:${fs.statSync(f).size}`);
});

test('a rotation (rename away, a new file under the name) is read through: the old file to its end, then the new from 0', async () => {
  const d = dir();
  const f = path.join(d, 'latest.log');
  fs.writeFileSync(f, '');
  const got = await followWith(f, { offset: 0 }, [
    () => fs.appendFileSync(f, 'a\nb\n'),
    () => {
      fs.appendFileSync(f, 'last of old\n'); // written just before the move, not yet read
      fs.renameSync(f, path.join(d, '2026-12-07-1.log'));
    },
    () => {}, // the name is missing for a poll
    () => fs.writeFileSync(f, 'first of new\n'),
    () => fs.appendFileSync(f, 'second of new\n'),
    () => {},
  ]);
  assert.deepEqual(
    got.map((g) => g.line),
    ['a', 'b', 'last of old', 'first of new', 'second of new'],
  );
  const ids = new Set(got.map((g) => g.id));
  assert.equal(ids.size, got.length, 'every id once: another inode after the rotation');
});

test('a file truncated in place (size below what was read) is read again from its start', async () => {
  const d = dir();
  const f = path.join(d, 'latest.log');
  fs.writeFileSync(f, 'one\ntwo\n');
  const got = await followWith(f, { offset: 0 }, [() => fs.truncateSync(f, 0), () => fs.appendFileSync(f, 'fresh\n'), () => {}]);
  assert.deepEqual(
    got.map((g) => g.line),
    ['one', 'two', 'fresh'],
  );
});

test('a resume: the same inode goes on from its offset, another (rotated since) from the start', async () => {
  const d = dir();
  const f = path.join(d, 'latest.log');
  fs.writeFileSync(f, 'x\ny\nz\n');
  const ino = fs.statSync(f, { bigint: true }).ino;
  assert.deepEqual(
    (await followWith(f, { ino, offset: 2 }, [() => {}])).map((g) => g.line),
    ['y', 'z'],
  );
  assert.deepEqual(
    (await followWith(f, { ino: ino + 1n, offset: 4 }, [() => {}])).map((g) => g.line),
    ['x', 'y', 'z'],
  );
});

test('a line longer than the cap is cut and marked, in bounded memory, and the next line is whole', async () => {
  const d = dir();
  const f = path.join(d, 'latest.log');
  fs.writeFileSync(f, '');
  const got = await followWith(f, { offset: 0 }, [() => fs.appendFileSync(f, `${'€'.repeat(100)}\nshort\n`), () => {}], { maxLine: 10 });
  assert.deepEqual(
    got.map((g) => g.line),
    [`€€€${cutMark(291)}`, 'short'],
  );
});

/**
 * A many-file delete or move whose program is killed mid-batch (SIGKILL right after its second
 * move, as a node crash or `kill -9` would), made by a one-shot Job and by an edit session: the
 * caller is answered 503 `outcome_unknown` with the op's id (never "either not made or fully made",
 * never a retry that would answer 404), and the next change of the world finishes the batch before
 * anything else, so every item is gone (or moved) and a deleted batch is one undo-trash record.
 */

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { V1Container } from '@kubernetes/client-node';
import { GRACE_MS, lockValue } from '../lib/protocol/lock-value.ts';
import { getServer, setServer } from './support/servers.ts';
import { FUNCTION_USER, q, ROOT, type Stack, startStack, tierMs, until } from './support/stack.ts';

const CRASH_CHILD = join(ROOT, 'job/journal/crash-child.test-kit.ts');
const S = '/api/v1/servers/survival';
const LOCK = 'felis.lolicon.best/maintenance';
const ITEMS = 12;

/**
 * Every file Pod runs the Job program with a kill right after a batch's second move (crash-child.test-kit.ts):
 * the journal's `move:2`, or the second item of a batch made item by item (as before the journal).
 */
const killedAfterTwoMoves = (c: V1Container) =>
  c.name === 'files' ? { command: ['env', 'FELIS_TEST_KILL_AFTER=move:2,batch:item:2', process.execPath, CRASH_CHILD, ...(c.command ?? []).slice(1), ...(c.args ?? [])] } : undefined;

/** `folder` with ITEMS files and a folder in it; the paths of all of them. */
function seed(s: Stack, folder: string): string[] {
  mkdirSync(join(s.world, folder, 'sub'), { recursive: true });
  writeFileSync(join(s.world, folder, 'sub', 'inner.txt'), 'inner\n');
  const paths = [`${folder}/sub`];
  for (let i = 0; i < ITEMS; i++) {
    writeFileSync(join(s.world, folder, `f${i}.txt`), `file ${i}\n`);
    paths.push(`${folder}/f${i}.txt`);
  }
  return paths;
}

const present = (s: Stack, paths: string[]) => paths.filter((p) => existsSync(join(s.world, p)));

/** Until a mutation is not refused as busy (a one-shot Job's lock is released when it has ended). */
async function mutate(s: Stack, method: string, path: string, body?: unknown) {
  const end = Date.now() + tierMs(20_000);
  for (;;) {
    const r = await s.call(method, path, body);
    if (r.status !== 409 || Date.now() > end) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** The batch is killed mid-way: 503 outcome_unknown naming the op, and the world shows part of it until the next change. */
async function interrupted(s: Stack, route: 'delete' | 'move', body: unknown, paths: string[]): Promise<void> {
  s.program = killedAfterTwoMoves;
  let r;
  try {
    r = await mutate(s, 'POST', `${S}/files/${route}`, body);
  } finally {
    s.program = undefined;
  }
  assert.equal(r.status, 503, r.text);
  assert.equal(r.body.error.code, 'outcome_unknown');
  assert.match(r.body.error.op, /^[0-9a-f]{16}$/);
  assert.match(r.body.error.message, new RegExp(`^the file operation ${r.body.error.op} ended without a result, so its outcome is unknown: the next change of this world settles it first`));
  assert.doesNotMatch(r.body.error.message, /either not made or fully made/);
  // Killed after two of its moves: until the next change, two items are in its working folder.
  assert.equal(present(s, paths).length, paths.length - 2, 'the kill came mid-batch');
}

/** The next change of the world (a mkdir) settles the batch first. */
async function nextChange(s: Stack, name: string): Promise<void> {
  const m = await mutate(s, 'POST', `${S}/files/mkdir?path=${q(name)}`);
  assert.equal(m.status, 200, m.text);
}

/** The trash holds the whole batch as one record of the many-file delete. */
async function oneRecord(s: Stack, paths: string[]): Promise<void> {
  const t = await s.call('GET', `${S}/files/trash`);
  assert.equal(t.status, 200, t.text);
  const records = (t.body.items as { op: string; paths: string[] }[]).filter((i) => i.op === 'delete-many' && i.paths.some((p) => paths.includes(p)));
  assert.deepEqual(
    records.map((i) => [...i.paths].sort()),
    [[...paths].sort()],
  );
}

describe('a batch killed mid-way in its one-shot Job', () => {
  let s: Stack;
  before(async () => {
    s = await startStack();
  });
  after(async () => {
    s.program = undefined;
    await s.close();
  });

  test('delete: 503 outcome_unknown with the op id; the next change removes every item, kept as one trash record', async () => {
    const paths = seed(s, 'del-job');
    await interrupted(s, 'delete', { paths }, paths);
    await nextChange(s, 'after-del-job');
    assert.deepEqual(present(s, paths), []);
    await oneRecord(s, paths);
  });

  test('move: 503 outcome_unknown with the op id; the next change makes every move', async () => {
    const paths = seed(s, 'mv-job');
    mkdirSync(join(s.world, 'mv-job-to'));
    const moves = paths.map((p) => ({ from: p, to: p.replace('mv-job/', 'mv-job-to/') }));
    await interrupted(s, 'move', { moves }, paths);
    await nextChange(s, 'after-mv-job');
    assert.deepEqual(present(s, paths), []);
    for (const m of moves) assert.ok(existsSync(join(s.world, m.to)), m.to);
    assert.equal(readFileSync(join(s.world, 'mv-job-to/sub/inner.txt'), 'utf8'), 'inner\n');
  });
});

describe('a batch killed mid-way in an edit session', () => {
  let s: Stack;
  before(async () => {
    s = await startStack({ browse: { edits: true, idleSeconds: 30, startBudgetMs: 300 } });
  });
  after(async () => {
    s.program = undefined;
    await s.close();
  });

  test('delete: 503 outcome_unknown with the op id, the lock kept until its grace; the next change removes every item, kept as one trash record', async () => {
    const paths = seed(s, 'del-session');
    // The session starts with the kill in its program; a write that takes no Job says it is up.
    s.program = killedAfterTwoMoves;
    await until(
      async () => {
        const before = s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0;
        const r = await s.call('POST', `${S}/files/mkdir?path=${q(`warm-${Date.now()}`)}`);
        assert.equal(r.status, 200, r.text);
        return (s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0) === before ? true : undefined;
      },
      'a change made by the edit session',
      tierMs(20_000, 60_000),
    );
    const jobs = s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0;
    await interrupted(s, 'delete', { paths }, paths);
    assert.equal(s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0, jobs, 'the session made it, not a Job');
    // The call broke while the change could still be under way: the lock stays until its grace.
    assert.match((await getServer(s.cluster, 'survival')).metadata.annotations?.[LOCK] ?? '', /^file-write@/);
    await setServer(s.cluster, 'survival', { annotations: { [LOCK]: lockValue('file-write', new Date(Date.now() - GRACE_MS - 1000)) } });
    await nextChange(s, 'after-del-session');
    assert.deepEqual(present(s, paths), []);
    await oneRecord(s, paths);
  });
});

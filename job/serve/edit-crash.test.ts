/**
 * An edit session killed mid-batch: the serving program (`felis files --serve --edit`, here
 * job/journal/crash-child.test-kit.ts, the program with test-only hooks) runs as a real child process and
 * kills itself with SIGKILL after a chosen durable step of a many-file delete or move it is making
 * for a call. The caller's connection breaks without a result; the next change, made through a new
 * session, recovers the world first, and the whole tree is then exactly the tree before the batch
 * or exactly the tree after it; with the trash on, what was deleted is in one held record.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { type Batch, encodeBatchEnv } from '../../lib/protocol/batch-env.ts';
import { encodeEditCall } from '../../lib/protocol/edit-call.ts';
import { jobToken, tokenDigest } from '../../lib/protocol/job-token.ts';
import { lockValue } from '../../lib/protocol/lock-value.ts';
import { UNDO_DIR } from '../../lib/protocol/working-names.ts';
import { treeDigest } from '../archive/forge.test-kit.ts';

const CHILD = path.join(import.meta.dirname, '..', 'journal', 'crash-child.test-kit.ts');
const TOKEN = jobToken(Buffer.alloc(32, 7), 'files-survival-e0002');
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-edit-crash-'));
after(() => fs.rmSync(base, { recursive: true, force: true }));

interface Session {
  port: number;
  ended: Promise<NodeJS.Signals | null>;
  steps: () => string[];
  /** Ends the session (SIGTERM: it stops after the call in hand) and waits for it. */
  stop: () => Promise<unknown>;
}

let runs = 0;
/** Starts an edit session on `root`; `stopAt`: it kills itself after that step (counted over all its calls). */
async function session(root: string, stopAt?: number): Promise<Session> {
  const stepsFile = path.join(base, `steps-${++runs}`);
  const p = spawn(process.execPath, [CHILD, 'files', '--serve', '--edit', '--worlds-root', root], {
    env: {
      ...process.env,
      FELIS_POD_IP: '127.0.0.1',
      FELIS_SERVE_PORT: '0',
      FELIS_SERVE_TOKEN_SHA256: tokenDigest(TOKEN),
      FELIS_TEST_STEPS: stepsFile,
      ...(stopAt ? { FELIS_TEST_STOP_AT: `${stopAt}:KILL` } : {}),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const ended = new Promise<NodeJS.Signals | null>((resolve) => p.on('exit', (_code, signal) => resolve(signal)));
  const port = await new Promise<number>((resolve, reject) => {
    let err = '';
    p.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /serving edits on 127\.0\.0\.1:(\d+)/.exec(err);
      if (m) resolve(Number(m[1]));
    });
    p.on('exit', () => reject(new Error(`the session ended before it listened: ${err}`)));
  });
  const steps = () => (fs.existsSync(stepsFile) ? fs.readFileSync(stepsFile, 'utf8').split('\n').filter(Boolean) : []);
  const stop = () => {
    p.kill('SIGTERM');
    return ended;
  };
  return { port, ended, steps, stop };
}

/** One call: its status and body, or `lost` when the connection broke without an answer. */
function call(s: Session, root: string, argv: string[], env: Record<string, string>): Promise<{ status: number; body: string } | 'lost'> {
  const body = encodeEditCall({ argv: ['files', ...argv, '--worlds-root', root], env, lock: lockValue('file-write', new Date()) });
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port: s.port, path: '/op', method: 'POST', agent: false, headers: { authorization: `Bearer ${TOKEN}`, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
        res.on('error', () => resolve('lost'));
      },
    );
    req.on('error', () => resolve('lost'));
    req.end(body);
  });
}

function world(): string {
  const root = fs.mkdtempSync(path.join(base, 'world-'));
  fs.writeFileSync(path.join(root, 'a.txt'), 'a');
  for (const d of ['d1', 'd2']) {
    fs.mkdirSync(path.join(root, d, 'sub'), { recursive: true });
    for (let i = 0; i < 10; i++) fs.writeFileSync(path.join(root, d, 'sub', `${i}.dat`), `${d} ${i}`);
  }
  fs.mkdirSync(path.join(root, 'moved'));
  return root;
}

/** The tree, without the trash (counted on its own) and the folder the next change makes. */
const digest = (root: string) => treeDigest(root, (rel) => rel === UNDO_DIR || rel === 'settled');
const heldRecords = (root: string) =>
  fs.existsSync(path.join(root, UNDO_DIR))
    ? fs.readdirSync(path.join(root, UNDO_DIR)).map((id) => JSON.parse(fs.readFileSync(path.join(root, UNDO_DIR, id, 'record.json'), 'utf8')) as { state: string; items: { path: string }[] })
    : [];

const cases: { label: string; argv: string[]; env: Record<string, string>; deleted: string[] }[] = [
  { label: 'delete-many, trash on', argv: ['--op', 'delete-many', '--path', '.'], env: { ...env({ paths: ['a.txt', 'd1', 'd2'] }), FELIS_TRASH: 'on' }, deleted: ['a.txt', 'd1', 'd2'] },
  {
    label: 'move-many',
    argv: ['--op', 'move-many', '--path', '.'],
    env: {
      ...env({
        moves: [
          { from: 'a.txt', to: 'moved/a.txt' },
          { from: 'd1', to: 'moved/d1' },
          { from: 'd2', to: 'd3' },
        ],
      }),
      FELIS_TRASH: 'off',
    },
    deleted: [],
  },
];

function env(b: Batch): Record<string, string> {
  return Object.fromEntries(encodeBatchEnv(b)!.map((v) => [v.name, v.value]));
}

for (const c of cases) {
  test(`an edit session killed mid-batch (${c.label}): the next change, through a new session, finds the whole old tree or the whole new one`, async () => {
    const old = digest(world());
    const cleanRoot = world();
    const clean = await session(cleanRoot);
    const r = await call(clean, cleanRoot, c.argv, c.env);
    assert.notEqual(r, 'lost');
    assert.equal((r as { status: number }).status, 200, (r as { body: string }).body);
    const steps = clean.steps();
    const fresh = digest(cleanRoot);
    await call(clean, cleanRoot, ['--op', 'mkdir', '--path', 'settled'], { FELIS_TRASH: 'off' });
    await clean.stop();
    const placing = steps.indexOf('state:placing') + 1;
    assert.ok(placing > 0, steps.join(','));
    // Before the plan is sealed, part way through the moves, at the commit, and (trash on) part way into the record.
    const points = [1, placing + 1, steps.indexOf('state:committed') + 1, ...(c.deleted.length ? [steps.indexOf('state:committed') + 2] : [])];
    const seen = new Set<string>();
    for (const n of points) {
      const root = world();
      const s = await session(root, n);
      assert.equal(await call(s, root, c.argv, c.env), 'lost', `killed after ${steps[n - 1]}: no answer`);
      assert.equal(await s.ended, 'SIGKILL');
      const next = await session(root);
      const settled = await call(next, root, ['--op', 'mkdir', '--path', 'settled'], { FELIS_TRASH: 'off' });
      await next.stop();
      assert.deepEqual(settled, { status: 200, body: '{}' }, `killed after ${steps[n - 1]}`);
      const d = digest(root);
      assert.ok(d === old || d === fresh, `killed after ${steps[n - 1]}: the tree is a mix of old and new`);
      seen.add(d === old ? 'old' : 'new');
      const records = heldRecords(root);
      if (d === fresh && c.deleted.length) {
        assert.deepEqual(
          records.map((x) => [x.state, x.items.map((i) => i.path)]),
          [['held', c.deleted]],
          `killed after ${steps[n - 1]}: one record`,
        );
      } else {
        assert.deepEqual(records, [], `killed after ${steps[n - 1]}: no record`);
      }
    }
    assert.deepEqual([...seen].sort(), ['new', 'old']);
  });
}

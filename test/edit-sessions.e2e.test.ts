/**
 * Edit sessions end to end, through the real client-node on both tiers: the small mutations made
 * by a session Pod answer exactly as one-shot Jobs do and leave the same tree; the world lock is
 * taken around each warm change as around a Job, so concurrent writers are refused or serialized,
 * a start never lands while a change is in flight, and a lock left by a caller that died holds the
 * world only until its grace.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { LABEL_FILES_EDIT } from '../lib/job-spec/render.ts';
import { GRACE_MS, lockValue } from '../lib/protocol/lock-value.ts';
import { getServer, STOPPED, setServer } from './support/servers.ts';
import { FUNCTION_USER, q, type Stack, startStack, TIER, tierMs, until } from './support/stack.ts';

const S = '/api/v1/servers/survival';
const LOCK = 'felis.lolicon.best/maintenance';
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const write = (content: string, extra: object = {}) => ({ content: Buffer.from(content).toString('base64'), content_sha256: sha(content), ...extra });
const creates = (s: Stack) => s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0;

/** The steps of the mutation suite: every small mutation, its refusals among them. */
const SUITE: [string, string, unknown?][] = [
  ['PUT', `${S}/file?path=hello.txt`, write('hello\n')],
  ['PUT', `${S}/file?path=hello.txt`, write('stale\n', { expect_sha256: sha('nope') })],
  ['PUT', `${S}/file?path=hello.txt`, write('hello again\n', { expect_sha256: sha('hello\n') })],
  ['PUT', `${S}/file?path=eula.txt`, write('eula=false\n', { create_only: true })],
  ['PUT', `${S}/file?path=${q('../escape.txt')}`, write('x')],
  ['PUT', `${S}/file?path=${q('config/paper-global.yml')}`, write('x', { expect_sha256: sha('x') })],
  ['POST', `${S}/files/mkdir?path=datapacks`],
  ['POST', `${S}/files/mkdir?path=datapacks`],
  ['POST', `${S}/files/mkdir?path=${q('nope/deeper')}`],
  ['POST', `${S}/files/rename?path=hello.txt`, { to: 'plugins/hi.txt' }],
  ['POST', `${S}/files/rename?path=server.properties`, { to: 'moved.properties' }],
  ['POST', `${S}/files/rename?path=missing.txt`, { to: 'x.txt' }],
  ['POST', `${S}/files/copy?path=${q('plugins/hi.txt')}`, { to: 'copied.txt' }],
  ['POST', `${S}/files/copy?path=missing.txt`, {}],
  ['DELETE', `${S}/file?path=${q('plugins/hi.txt')}`],
  ['DELETE', `${S}/file?path=nope.yml`],
  ['POST', `${S}/files/mkdir?path=old`],
  ['PUT', `${S}/file?path=${q('old/a.txt')}`, write('a')],
  ['PUT', `${S}/file?path=${q('old/b.txt')}`, write('b')],
  ['POST', `${S}/files/delete`, { paths: ['old/a.txt', '../../etc/passwd'] }],
  ['POST', `${S}/files/delete`, { paths: ['old/a.txt', 'old/nope.txt'] }],
  [
    'POST',
    `${S}/files/move`,
    {
      moves: [
        { from: 'old/b.txt', to: 'datapacks/b.txt' },
        { from: 'copied.txt', to: 'copied-2.txt' },
      ],
    },
  ],
  ['POST', `${S}/files/move`, { moves: [{ from: 'datapacks/b.txt', to: 'eula.txt' }] }],
  ['POST', `${S}/files/chmod`, { files: [{ path: 'copied-2.txt', mode: '600' }] }],
  ['POST', `${S}/files/chmod`, { files: [{ path: 'copied-2.txt', mode: '4755' }] }],
  ['POST', `${S}/files/delete`, { paths: ['old/a.txt', 'copied-2.txt'] }],
  ['GET', `${S}/files/trash`],
];

/** Ids and times differ from run to run; everything else must not. */
function normal(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normal);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v))
      out[k] = k === 'trash_id' || k === 'id' || k === 'request_id' ? '<id>' : k === 'at' || k === 'expires_at' || k === 'modified' || k === 'mtime' ? '<time>' : normal(x);
    return out;
  }
  return v;
}

/** The world as files, folders, links and modes; the trash's records by what they hold, not their ids. */
function tree(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(dir, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    const st = lstatSync(join(dir, r));
    const mode = (st.mode & 0o7777).toString(8);
    if (rel === '' && name === '.felis-edit-undo') {
      out.push(`${r}/ ${readdirSync(join(dir, r)).length} records`);
    } else if (st.isSymbolicLink()) out.push(`${r} -> ${readlinkSync(join(dir, r))}`);
    else if (st.isDirectory()) out.push(`${r}/ ${mode}`, ...tree(dir, r));
    else out.push(`${r} ${mode} ${sha(readFileSync(join(dir, r)))}`);
  }
  return out;
}

async function runSuite(s: Stack): Promise<{ answers: unknown[]; tree: string[]; jobs: string[] }> {
  const answers: unknown[] = [];
  const jobs: string[] = [];
  for (const [method, path, body] of SUITE) {
    const before = creates(s);
    const r = await s.call(method, path, body);
    answers.push({ step: `${method} ${path}`, status: r.status, body: normal(r.body) });
    if (creates(s) > before) jobs.push(`${method} ${path}`);
  }
  return { answers, tree: tree(s.world), jobs };
}

/** Writes a scratch file until one is made without a Job: the edit session is up. */
async function untilWarmWrite(s: Stack): Promise<void> {
  await until(
    async () => {
      const before = creates(s);
      const r = await s.call('PUT', `${S}/file?path=warm-up.txt`, write(`warm ${Date.now()}`));
      assert.equal(r.status, 200, r.text);
      return creates(s) === before ? true : undefined;
    },
    'a write made by the edit session',
    tierMs(20_000, 60_000),
  );
  const d = await s.call('DELETE', `${S}/file?path=warm-up.txt`);
  assert.equal(d.status, 200, d.text);
  // The trash record of the warm-up goes too, so both runs start from the same trash.
  assert.equal((await s.call('DELETE', `${S}/files/trash`)).status, 200);
}

/** The suite's run through one-shot Jobs, made first (the cluster tier runs one stack at a time). */
let viaJobs: Awaited<ReturnType<typeof runSuite>> | undefined;

describe(`one-shot Jobs through the ${TIER} cluster (edit sessions off)`, () => {
  test('the mutation suite, every change a Job', async () => {
    const cold = await startStack({ browse: { edits: false } });
    try {
      viaJobs = await runSuite(cold);
      assert.ok(viaJobs.jobs.length >= SUITE.length - 8, `the one-shot run made its changes in Jobs: ${viaJobs.jobs}`);
    } finally {
      await cold.close();
    }
  });
});

describe(`edit sessions through the ${TIER} cluster`, () => {
  let warm: Stack;
  before(async () => {
    warm = await startStack({ browse: { idleSeconds: 30, startBudgetMs: 300 } });
  });
  after(async () => {
    await warm?.close();
  });

  test('the mutation suite answers exactly as one-shot Jobs do, and leaves the same tree', async () => {
    assert.ok(viaJobs, 'the one-shot run came first');
    await untilWarmWrite(warm);
    const viaSession = await runSuite(warm);
    // Only the trash listing (a read, not a session op) ran a Job.
    assert.deepEqual(viaSession.jobs, [`GET ${S}/files/trash`], 'every mutation of the suite was made by the edit session');
    for (let i = 0; i < SUITE.length; i++) assert.deepEqual(viaSession.answers[i], viaJobs.answers[i]);
    assert.deepEqual(viaSession.tree, viaJobs.tree);
    // The answers carry what each step is: a refusal somewhere, a success elsewhere.
    const statuses = (viaSession.answers as { status: number }[]).map((a) => a.status);
    assert.ok(statuses.includes(200) && statuses.includes(409) && statuses.includes(400) && statuses.includes(404), String(statuses));
  });

  test('a 1 MiB write (what a read shows) is made by the session too, and reads back the same', async () => {
    await untilWarmWrite(warm);
    const mib = Buffer.alloc(1 << 20);
    for (let i = 0; i < mib.length; i++) mib[i] = (i * 31 + 7) & 0xff;
    const sum = createHash('sha256').update(mib).digest('hex');
    const before = creates(warm);
    const w = await warm.call('PUT', `${S}/file?path=big.bin`, { content: mib.toString('base64'), content_sha256: sum });
    assert.equal(w.status, 200, w.text);
    assert.equal(creates(warm), before, 'no Job: the session made it');
    const r = await warm.call('GET', `${S}/file?path=big.bin`);
    assert.equal(r.status, 200, r.text.slice(0, 200));
    assert.equal(r.body.sha256, sum);
    assert.equal((await warm.call('DELETE', `${S}/file?path=big.bin`)).status, 200);
    assert.equal((await warm.call('DELETE', `${S}/files/trash`)).status, 200);
  });

  test('the edit Pod never holds the world: between changes the holder is free and a start is admitted', async () => {
    await untilWarmWrite(warm);
    const core = warm.cluster.kubeConfig(warm.cluster.adminToken).makeApiClient(CoreV1Api);
    const pods = (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: `${LABEL_FILES_EDIT}=true` })).items.filter((p) => p.status?.phase === 'Running');
    assert.equal(pods.length, 1, 'one edit Pod serving');
    const h = await warm.call('GET', `${S}/holder`);
    assert.equal(h.status, 200, h.text);
    assert.equal(h.body.holder ?? null, null, h.text);
    assert.equal((await getServer(warm.cluster, 'survival')).metadata.annotations?.[LOCK], undefined, 'the lock was given back');
    const start = await warm.call('POST', `${S}/start`);
    assert.equal(start.status, 202, start.text);
    // Running: a change is refused at the gate, before any lock or Pod.
    const refused = await warm.call('PUT', `${S}/file?path=late.txt`, write('late'));
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.body.error.code, 'not_stopped');
    assert.equal(existsSync(join(warm.world, 'late.txt')), false);
    // That refusal also ended the edit session: no call can come while the server runs.
    await until(
      async () => ((await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: `${LABEL_FILES_EDIT}=true` })).items.every((p) => p.status?.phase === 'Succeeded') ? true : undefined),
      'the edit Pod to end',
      tierMs(10_000, 30_000),
    );
    await setServer(warm.cluster, 'survival', STOPPED);
  });

  test('20 concurrent warm writes: each admitted alone or refused 409; with Prefer: wait all land, one at a time', async () => {
    await untilWarmWrite(warm);
    const names = Array.from({ length: 20 }, (_, i) => `race-${i}.txt`);
    const answers = await Promise.all(names.map((n) => warm.call('PUT', `${S}/file?path=${n}`, write(n))));
    let made = 0;
    for (const [i, a] of answers.entries()) {
      if (a.status === 200) {
        made++;
        assert.equal(readFileSync(join(warm.world, names[i]!), 'utf8'), names[i]);
      } else {
        assert.equal(a.status, 409, a.text);
        assert.equal(a.body.error.code, 'maintenance_in_progress');
        assert.equal(existsSync(join(warm.world, names[i]!)), false, 'a refused write wrote nothing');
      }
    }
    assert.ok(made >= 1, 'at least the first was admitted');

    const waited = await Promise.all(names.map((n) => warm.call('PUT', `${S}/file?path=w-${n}`, write(`w-${n}`), { prefer: 'wait=30' })));
    for (const [i, a] of waited.entries()) {
      assert.equal(a.status, 200, a.text);
      assert.equal(readFileSync(join(warm.world, `w-${names[i]}`), 'utf8'), `w-${names[i]}`);
    }
    assert.equal((await getServer(warm.cluster, 'survival')).metadata.annotations?.[LOCK], undefined);
  });

  test('a start racing warm changes never lands while one is in flight: it waits for it (50 rounds)', async () => {
    // A copy of a big file keeps the change in flight long enough for a start to meet it.
    writeFileSync(join(warm.world, 'big.bin'), Buffer.alloc(24 << 20, 7));
    await untilWarmWrite(warm);
    const outcomes = new Map<string, number>();
    for (let round = 0; round < 50; round++) {
      const to = `copy-${round}.bin`;
      const copy = warm.call('POST', `${S}/files/copy?path=big.bin`, { to });
      // From before the copy is admitted to after it has landed: each order happens.
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 250)));
      const start = await warm.call('POST', `${S}/start`);
      // What the world holds at the moment the start was answered.
      const landed = existsSync(join(warm.world, to));
      const c = await copy;
      const key = `copy ${c.status}${c.body?.error ? ` ${c.body.error.code}` : ''} / start ${start.status}${start.body?.error ? ` ${start.body.error.code}` : ''}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      assert.ok([200, 409].includes(c.status), c.text);
      assert.ok([202, 409].includes(start.status), start.text);
      if (start.status === 202 && c.status === 200) assert.ok(landed, `round ${round}: the start was admitted while the copy was still being made`);
      if (start.status === 409) assert.equal(start.body.error.code, 'maintenance_in_progress');
      if (c.status !== 200) assert.equal(existsSync(join(warm.world, to)), false, 'a refused copy made nothing');
      await setServer(warm.cluster, 'survival', STOPPED);
      if (c.status === 200) assert.equal((await warm.call('DELETE', `${S}/file?path=${to}`)).status, 200);
    }
    // A start now drains the line (docs/world-maintenance.md, Changes that join): it waits for the
    // change in flight rather than being refused, and lands after it (checked each round above).
    const keys = [...outcomes.keys()].join('; ');
    assert.ok(
      [...outcomes.keys()].some((k) => k === 'copy 200 / start 202'),
      keys,
    );
  });

  test('a folder copy the session refuses as not small goes to the background: its op is the only Job', async () => {
    await untilWarmWrite(warm);
    const before = creates(warm);
    const r = await warm.call('POST', `${S}/files/copy?path=plugins`, { to: 'plugins-copy' });
    assert.equal(r.status, 202, r.text);
    assert.equal(creates(warm) - before, 1, 'no refused sync Job: the session refused it');
    const op = await until(
      async () => {
        const ops = await warm.call('GET', `${S}/files/ops`);
        const o = ops.body.ops.find((x: { id: string }) => x.id === r.body.op.id);
        return o && o.state !== 'running' && o.state !== 'pending' ? o : undefined;
      },
      'the copy op to end',
      tierMs(20_000, 60_000),
    );
    assert.equal(op.state, 'succeeded', JSON.stringify(op));
    assert.equal(readFileSync(join(warm.world, 'plugins-copy/README.txt'), 'utf8'), readFileSync(join(warm.world, 'plugins/README.txt'), 'utf8'));
  });

  test('a lock left by a caller that died holds the world until its grace, then a warm write is admitted', async () => {
    await untilWarmWrite(warm);
    // Written as by a function killed between lock and release, GRACE less 3 s ago.
    await setServer(warm.cluster, 'survival', { annotations: { [LOCK]: lockValue('file-write', new Date(Date.now() - GRACE_MS + 3_000)) } });
    const held = await warm.call('PUT', `${S}/file?path=after-grace.txt`, write('x'));
    assert.equal(held.status, 409, held.text);
    assert.equal(held.body.error.code, 'maintenance_in_progress');
    await new Promise((r) => setTimeout(r, 4_000));
    const ok = await warm.call('PUT', `${S}/file?path=after-grace.txt`, write('x'));
    assert.equal(ok.status, 200, ok.text);
    assert.equal(readFileSync(join(warm.world, 'after-grace.txt'), 'utf8'), 'x');
    assert.equal((await getServer(warm.cluster, 'survival')).metadata.annotations?.[LOCK], undefined, 'the stale lock went with the release of the new one');
  });
});

/**
 * World maintenance end to end: the gates on file routes, admission and release against the
 * embedded API server (real client-node, real merge patches with resourceVersion), the guarded
 * start, operator unlock, restore-chain settling, and a race of admissions against starts.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { KubeServerApi } from '../lib/kube/servers.ts';
import { MaintenanceBusyError, NotStoppedError } from '../lib/maintenance/errors.ts';
import { GRACE_MS, lockValue } from '../lib/maintenance/holder.ts';
import { WorldLock } from '../lib/maintenance/world-lock.ts';
import { admin, createFelisServer, createJob, createServer, getServer, holderJob, RUNNING, restoreTemplateFile, STOPPED, setServer, terminatingGamePod } from './support/servers.ts';
import { q, type Stack, startStack, tierMs } from './support/stack.ts';

const LOCK = 'felis.lolicon.best/maintenance';
const sha = (b: string) => createHash('sha256').update(b).digest('hex');
const put = (s: Stack, server: string, path: string, text: string) =>
  s.call('PUT', `/api/v1/servers/${server}/file?path=${q(path)}`, { content: Buffer.from(text).toString('base64'), content_sha256: sha(text) });
/** Every entry under `dir` with its content hash (or `dir`): what "the tree is unchanged" compares. */
function treeOf(dir: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const rel = prefix + name;
    if (statSync(p).isDirectory()) {
      out[rel + '/'] = 'dir';
      Object.assign(out, treeOf(p, rel + '/'));
    } else out[rel] = createHash('sha256').update(readFileSync(p)).digest('hex');
  }
  return out;
}
const waitFor = async (what: string, cond: () => Promise<boolean>, ms = 10_000) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`not reached within ${ms} ms: ${what}`);
};

describe('world maintenance', () => {
  let s: Stack;
  before(async () => {
    const template = restoreTemplateFile(
      [
        'apiVersion: batch/v1',
        'kind: Job',
        'metadata:',
        '  labels: { felis.lolicon.best/backup-id: "{{backupId}}" }',
        'spec:',
        '  backoffLimit: 0',
        '  template:',
        '    spec:',
        '      restartPolicy: Never',
        '      containers:',
        '        - name: restore',
        '          image: felis-test/restore',
        '          command: ["sh", "-c", "echo restoring {{backupRef}} into {{worldClaim}}; sleep 30"]',
        '',
      ].join('\n'),
    );
    s = await startStack({ restoreTemplate: template });
  });
  after(async () => {
    await s?.close();
  });

  test('gates: unknown server 404, a change of a running server 409 not_stopped (its reads answer), no volume 409 no_world_volume', async () => {
    const unknown = await s.call('GET', '/api/v1/servers/nobody/files');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'not_found');
    await createServer(s.cluster, 'running1', RUNNING);
    // Reads beside the game (test/running-reads.e2e.test.ts has them all).
    const listed = await s.call('GET', '/api/v1/servers/running1/files');
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.body.world_state, 'running');
    assert.equal((await s.call('GET', '/api/v1/servers/running1/file?path=a')).body.error.code, 'not_found');
    for (const [m, p, body] of [
      ['PUT', '/api/v1/servers/running1/file?path=a', { content: '', content_sha256: sha('') }],
      ['DELETE', '/api/v1/servers/running1/file?path=a', undefined],
      ['POST', '/api/v1/servers/running1/files/mkdir?path=a', undefined],
      ['POST', '/api/v1/servers/running1/files/rename?path=a', { to: 'b' }],
    ] as const) {
      const r = await s.call(m, p, body);
      assert.equal(r.status, 409, `${m} ${p}`);
      assert.equal(r.body.error.code, 'not_stopped');
      assert.equal(r.body.error.message, 'stop the server before working with its files');
    }
    await createServer(s.cluster, 'novolume', STOPPED, false);
    const nv = await s.call('GET', '/api/v1/servers/novolume/files');
    assert.equal(nv.status, 409);
    assert.equal(nv.body.error.code, 'no_world_volume');
  });

  test('a system server running: of its changes only a PUT of exactly felis-experience.json, and it locks as config-write', async () => {
    await createServer(s.cluster, 'lobby', RUNNING);
    const w = await put(s, 'lobby', 'felis-experience.json', '{"motd":"hi"}');
    assert.equal(w.status, 200, w.text);
    const r = await s.call('GET', '/api/v1/servers/lobby/file?path=felis-experience.json');
    assert.equal(r.status, 200, r.text);
    for (const [m, p] of [
      ['PUT', './felis-experience.json'],
      ['PUT', 'world/level.dat'],
      ['DELETE', 'felis-experience.json'],
    ] as const) {
      const x = m === 'PUT' ? await put(s, 'lobby', p, '{}') : await s.call(m, `/api/v1/servers/lobby/file?path=${q(p)}`);
      assert.equal(x.status, 409, `${m} ${p}`);
      assert.equal(x.body.error.code, 'not_stopped');
    }
    // Its reads answer as any running server's do.
    assert.equal((await s.call('GET', '/api/v1/servers/lobby/files')).body.world_state, 'running');
    // The settings save takes the config-write lock: a fresh foreign lock refuses it.
    await setServer(s.cluster, 'lobby', { annotations: { [LOCK]: lockValue('backup', new Date()) } });
    const busy = await put(s, 'lobby', 'felis-experience.json', '{}');
    assert.equal(busy.status, 409);
    assert.equal(busy.body.error.code, 'maintenance_in_progress');
    await setServer(s.cluster, 'lobby', { annotations: { [LOCK]: null } });
  });

  test('locks: a fresh one refuses, a stale one is overwritten, one dated beyond Grace in the future holds nothing', async () => {
    await setServer(s.cluster, 'survival', { annotations: { [LOCK]: lockValue('restore', new Date(Date.now() - 10_000)) } });
    const fresh = await put(s, 'survival', 'lock-test.txt', 'x');
    assert.equal(fresh.status, 409);
    assert.equal(fresh.body.error.message, "a restore is running on this server's world; retry once it finishes");
    const h = await s.call('GET', '/api/v1/servers/survival/holder');
    assert.equal(h.body.held, true);
    assert.equal(h.body.kind, 'restore');
    assert.equal(h.body.source, 'lock');
    const start = await s.call('POST', '/api/v1/servers/survival/start');
    assert.equal(start.status, 409);
    assert.equal(start.body.error.code, 'maintenance_in_progress');
    assert.equal((await getServer(s.cluster, 'survival')).spec.desiredState, 'Stopped');

    await setServer(s.cluster, 'survival', { annotations: { [LOCK]: lockValue('restore', new Date(Date.now() - GRACE_MS - 1000)) } });
    const staleHolder = await s.call('GET', '/api/v1/servers/survival/holder');
    assert.equal(staleHolder.body.held, false);
    assert.match(staleHolder.body.stale_lock, /^restore@\d{4}-/);
    const over = await put(s, 'survival', 'lock-test.txt', 'stale lock overwritten');
    assert.equal(over.status, 200, over.text);

    await setServer(s.cluster, 'survival', { annotations: { [LOCK]: lockValue('restore', new Date(Date.now() + 3600_000)) } });
    const future = await put(s, 'survival', 'lock-test.txt', 'future lock ignored');
    assert.equal(future.status, 200, future.text);
    // Release removes our own lock and left the world free.
    assert.equal((await getServer(s.cluster, 'survival')).metadata.annotations?.[LOCK], undefined);
  });

  test('a holder Job refuses writes and starts, shows in holder and holders, and both succeed once it ends', async () => {
    await createJob(s.cluster, holderJob('mc-backup-1', 'survival', 'felis-backup', ['sh', '-c', 'sleep 1.5']));
    await waitFor('the backup Job holds', async () => (await s.call('GET', '/api/v1/servers/survival/holder')).body.held === true);
    const w = await put(s, 'survival', 'during-backup.txt', 'x');
    assert.equal(w.status, 409);
    assert.equal(w.body.error.code, 'maintenance_in_progress');
    assert.equal(w.body.error.message, "a backup is running on this server's world; retry once it finishes");
    const st = await s.call('POST', '/api/v1/servers/survival/start');
    assert.equal(st.status, 409);
    const h = await s.call('GET', '/api/v1/servers/survival/holder');
    assert.equal(h.body.kind, 'backup');
    assert.equal(h.body.source, 'job');
    assert.equal(h.body.job, 'mc-backup-1');
    assert.match(h.body.since, /^\d{4}-/);
    const all = await s.call('GET', '/api/v1/holders');
    assert.ok(all.body.holders.some((x: { server: string; kind: string }) => x.server === 'survival' && x.kind === 'backup'));
    const unlock = await s.call('DELETE', '/api/v1/servers/survival/lock');
    assert.equal(unlock.status, 409, 'a Job hold cannot be cleared');
    await waitFor('the backup Job ended', async () => (await s.call('GET', '/api/v1/servers/survival/holder')).body.held === false);
    const w2 = await put(s, 'survival', 'during-backup.txt', 'after');
    assert.equal(w2.status, 200, w2.text);
    const st2 = await s.call('POST', '/api/v1/servers/survival/start');
    assert.equal(st2.status, 202, st2.text);
    assert.equal(st2.body.desiredState, 'Running');
    const stop = await s.call('POST', '/api/v1/servers/survival/stop');
    assert.equal(stop.status, 202);
    assert.equal((await getServer(s.cluster, 'survival')).spec.desiredState, 'Stopped');
    await setServer(s.cluster, 'survival', STOPPED);
  });

  test("a terminating game Pod with Felis's labels refuses a write with not_stopped, and lets it in once gone", async () => {
    const release = await terminatingGamePod(s.cluster, 'survival');
    try {
      const w = await put(s, 'survival', 'pod.txt', 'x');
      assert.equal(w.status, 409, w.text);
      assert.equal(w.body.error.code, 'not_stopped');
      assert.equal(existsSync(join(s.world, 'pod.txt')), false);
    } finally {
      await release();
    }
    await waitFor(
      'the game Pod is gone',
      async () => (await admin(s.cluster).core.listNamespacedPod({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/component=server' })).items.length === 0,
    );
    const w = await put(s, 'survival', 'pod.txt', 'x');
    assert.equal(w.status, 200, w.text);
  });

  test("a server shaped like Felis's: the write lands in spec.storage.claimName, on the node in status.nodeName", async () => {
    const claim = await createFelisServer(s.cluster, 'felisworld', { claimName: 'felisworld-data', statusNodeName: 'local' });
    assert.equal(claim, 'felisworld-data');
    const w = await put(s, 'felisworld', 'hello.txt', 'from felis');
    assert.equal(w.status, 200, w.text);
    assert.equal(readFileSync(join(s.dataDir, 'claims', 'minecraft', 'felisworld-data', 'hello.txt'), 'utf8'), 'from felis');
    const jobs = (await admin(s.cluster).batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/server=felisworld' })).items;
    assert.equal(jobs.length, 1);
    assert.deepEqual(jobs[0]!.spec!.template.spec!.nodeSelector, { 'felis.node-restriction.kubernetes.io/identity': 'local' });
    assert.equal(jobs[0]!.spec!.template.spec!.volumes!.find((v) => v.persistentVolumeClaim)!.persistentVolumeClaim!.claimName, 'felisworld-data');
    // Felis's default claim name does not exist for this server: nothing went there.
    assert.equal(existsSync(join(s.dataDir, 'worlds', 'felisworld')), false);
  });

  test('every mutation while the world is held is 409, creates no Job, and leaves the tree as it was', async () => {
    // File Jobs by uid: finished ones may be retired by their TTL meanwhile, so "none created" means no new uid.
    const fileJobs = async () =>
      new Set((await admin(s.cluster).batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'app.kubernetes.io/managed-by=felis-files' })).items.map((j) => j.metadata!.uid!));
    const mutations = [
      ['PUT', `/api/v1/servers/survival/file?path=${q('config/new.yml')}`, { content: Buffer.from('x').toString('base64'), content_sha256: sha('x') }],
      ['PUT', `/api/v1/servers/survival/file?path=${q('server.properties')}`, { content: '', content_sha256: sha('') }],
      ['POST', `/api/v1/servers/survival/files/mkdir?path=${q('newdir')}`, undefined],
      ['DELETE', `/api/v1/servers/survival/file?path=${q('plugins')}`, undefined],
      ['DELETE', `/api/v1/servers/survival/file?path=${q('eula.txt')}`, undefined],
      ['POST', `/api/v1/servers/survival/files/rename?path=${q('world')}`, { to: 'world-old' }],
    ] as const;
    const holds: Array<[string, () => Promise<() => Promise<void>>]> = [
      [
        'a fresh lock',
        async () => {
          await setServer(s.cluster, 'survival', { annotations: { [LOCK]: lockValue('backup', new Date()) } });
          return async () => setServer(s.cluster, 'survival', { annotations: { [LOCK]: null } });
        },
      ],
      [
        'a migration lock a day old',
        async () => {
          await setServer(s.cluster, 'survival', { annotations: { [LOCK]: lockValue('migration', new Date(Date.now() - 86_400_000)) } });
          return async () => setServer(s.cluster, 'survival', { annotations: { [LOCK]: null } });
        },
      ],
      [
        'a running restore Job',
        async () => {
          await createJob(s.cluster, holderJob('mc-restore-held', 'survival', 'felis-restore', ['sh', '-c', 'sleep 30']));
          return async () => {
            await admin(s.cluster).batch.deleteNamespacedJob({ namespace: 'minecraft', name: 'mc-restore-held', propagationPolicy: 'Background' });
            await waitFor('the restore Job is gone', async () => (await s.call('GET', '/api/v1/servers/survival/holder')).body.held === false, tierMs(10_000, 30_000));
          };
        },
      ],
    ];
    for (const [what, hold] of holds) {
      const before = treeOf(s.world);
      const jobsBefore = await fileJobs();
      const unhold = await hold();
      try {
        for (const [m, p, body] of mutations) {
          const r = await s.call(m, p, body);
          assert.equal(r.status, 409, `${what}: ${m} ${p}: ${r.text}`);
          assert.equal(r.body.error.code, 'maintenance_in_progress');
        }
        const created = [...(await fileJobs())].filter((uid) => !jobsBefore.has(uid));
        assert.deepEqual(created, [], `${what}: no file Job was created`);
        assert.deepEqual(treeOf(s.world), before, `${what}: the tree is unchanged`);
      } finally {
        await unhold();
      }
    }
  });

  test('the lock is released on every failure path: Job create fails, caller gone (the runner timeout: below)', async () => {
    const lockOf = async () => (await getServer(s.cluster, 'survival')).metadata.annotations?.[LOCK];
    s.cluster.faults.failNext({ verb: 'create', resource: 'jobs', code: 500, reason: 'InternalError', message: 'boom' });
    const failed = await put(s, 'survival', 'x.txt', 'x');
    assert.equal(failed.status, 500);
    assert.equal(await lockOf(), undefined, 'released after a failed create');

    // The caller goes away mid-request (here the deadline is 90 s, so only the disconnect can end
    // the wait): the release still runs, detached from the request.
    await createServer(s.cluster, 'leaver', STOPPED);
    s.cluster.faults.pod('felis.lolicon.best/server=leaver', { neverStart: true });
    const lockOfLeaver = async () => (await getServer(s.cluster, 'leaver')).metadata.annotations?.[LOCK];
    try {
      const ac = new AbortController();
      const pending = fetch(s.url + '/api/v1/servers/leaver/file?path=y.txt', {
        method: 'PUT',
        headers: { authorization: 'Bearer test-token-0123456789', 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'eQ==', content_sha256: sha('y') }),
        signal: ac.signal,
      }).catch(() => undefined);
      await waitFor('the write is admitted', async () => (await lockOfLeaver()) !== undefined);
      ac.abort();
      await pending;
      await waitFor('released after the caller left', async () => (await lockOfLeaver()) === undefined, 5000);
    } finally {
      s.cluster.faults.clear();
    }
  });

  test('a function killed between lock and Job create leaves a world that is free again after Grace', async () => {
    const api = new KubeServerApi(s.cluster.kubeConfig(s.cluster.tokenFor('minecraft', 'felis-world')));
    const killed = new WorldLock(api, { namespace: 'minecraft' });
    await killed.acquire('survival', 'file-write'); // never released: the process "died"
    await assert.rejects(new WorldLock(api, { namespace: 'minecraft' }).acquire('survival', 'file-write'), MaintenanceBusyError);
    const later = new WorldLock(api, { namespace: 'minecraft', now: () => new Date(Date.now() + GRACE_MS + 1000) });
    assert.equal((await later.inspect('survival')).state.holder, undefined);
    const release = await later.acquire('survival', 'file-write');
    await release();
    assert.equal((await getServer(s.cluster, 'survival')).metadata.annotations?.[LOCK], undefined);
  });

  test('unlock: a migration lock never, a fresh one only with force, a stale one freely; each answer says what was removed', async () => {
    const lockOf = async () => (await getServer(s.cluster, 'survival')).metadata.annotations?.[LOCK];
    const migration = lockValue('migration', new Date(Date.now() - 86_400_000));
    await setServer(s.cluster, 'survival', { annotations: { [LOCK]: migration } });
    for (const q of ['', '?force=true']) {
      const r = await s.call('DELETE', `/api/v1/servers/survival/lock${q}`);
      assert.equal(r.status, 409, r.text);
      assert.equal(r.body.error.code, 'lock_protected');
      assert.equal(await lockOf(), migration);
    }
    // The migration lock keeps a write out, whatever unlock was asked.
    assert.equal((await put(s, 'survival', 'during-migration.txt', 'x')).body.error.code, 'maintenance_in_progress');

    const fresh = lockValue('file-write', new Date());
    await setServer(s.cluster, 'survival', { annotations: { [LOCK]: fresh } });
    const refused = await s.call('DELETE', '/api/v1/servers/survival/lock');
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'lock_fresh');
    assert.equal(await lockOf(), fresh);
    assert.equal((await s.call('DELETE', '/api/v1/servers/survival/lock?force=yes')).body.error.code, 'bad_request');
    const forced = await s.call('DELETE', '/api/v1/servers/survival/lock?force=true');
    assert.equal(forced.status, 200, forced.text);
    assert.deepEqual(forced.body, { name: 'survival', removed: true, lock: { kind: 'file-write', since: fresh.slice('file-write@'.length), value: fresh, fresh: true } });
    assert.equal(await lockOf(), undefined);

    const stale = lockValue('restore', new Date(Date.now() - GRACE_MS - 5000));
    await setServer(s.cluster, 'survival', { annotations: { [LOCK]: stale } });
    const r = await s.call('DELETE', '/api/v1/servers/survival/lock');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.removed, true);
    assert.equal(r.body.lock.value, stale);
    assert.equal(r.body.lock.fresh, false);
    assert.equal((await s.call('GET', '/api/v1/servers/survival/holder')).body.held, false);
    assert.deepEqual((await s.call('DELETE', '/api/v1/servers/survival/lock')).body, { name: 'survival', removed: false, lock: null });
  });

  test('restore chains settle: started (restore Job created), snapshot_failed, server_started, left while running', async () => {
    const chain = (name: string, server: string) =>
      holderJob(
        name,
        server,
        'felis-backup',
        ['sh', '-c', 'sleep 30'],
        { 'felis.lolicon.best/then-restore': 'pending' },
        {
          'felis.lolicon.best/restore-ref': `s3://backups/${server}/42.tar.zst`,
          'felis.lolicon.best/restore-backup-id': '42',
        },
      );
    await createServer(s.cluster, 'chain-ok', STOPPED);
    await createServer(s.cluster, 'chain-bad', STOPPED);
    await createServer(s.cluster, 'chain-run', RUNNING);
    await createServer(s.cluster, 'chain-wait', STOPPED);
    for (const [n, srv] of [
      ['b-ok', 'chain-ok'],
      ['b-bad', 'chain-bad'],
      ['b-run', 'chain-run'],
      ['b-wait', 'chain-wait'],
    ])
      await createJob(s.cluster, chain(n!, srv!));
    const done = [
      { type: 'SuccessCriteriaMet', status: 'True' },
      { type: 'Complete', status: 'True' },
    ];
    await s.cluster.setJobConditions('minecraft', 'b-ok', done);
    await s.cluster.setJobConditions('minecraft', 'b-run', done);
    await s.cluster.setJobConditions('minecraft', 'b-bad', [
      { type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded' },
      { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' },
    ]);
    // A pending chain holds as a restore even after its backup finished.
    assert.equal((await s.call('GET', '/api/v1/servers/chain-ok/holder')).body.kind, 'restore');

    const r = await s.call('POST', '/api/v1/restore-chains/settle');
    assert.equal(r.status, 200, r.text);
    const by = Object.fromEntries(r.body.chains.map((c: { job: string }) => [c.job, c]));
    assert.equal(by['b-ok'].state, 'started');
    assert.equal(by['b-bad'].state, 'abandoned');
    assert.equal(by['b-bad'].reason, 'snapshot_failed');
    assert.equal(by['b-run'].reason, 'server_started');
    assert.equal(by['b-wait'], undefined);

    const jobs = (await admin(s.cluster).batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/server=chain-ok' })).items;
    const backup = jobs.find((j) => j.metadata!.name === 'b-ok')!;
    assert.equal(backup.metadata!.labels!['felis.lolicon.best/then-restore'], 'started');
    assert.equal(backup.metadata!.annotations!['felis.lolicon.best/restore-ref'], 's3://backups/chain-ok/42.tar.zst');
    const restore = jobs.find((j) => j.metadata!.labels!['app.kubernetes.io/managed-by'] === 'felis-restore')!;
    assert.ok(restore, 'the restore Job exists');
    assert.equal(restore.metadata!.labels!['felis.lolicon.best/backup-id'], '42');
    assert.match(restore.spec!.template.spec!.containers[0]!.command!.join(' '), /s3:\/\/backups\/chain-ok\/42\.tar\.zst into world-chain-ok-0/);
    // The chain no longer holds; the restore Job does.
    const h = await s.call('GET', '/api/v1/servers/chain-ok/holder');
    assert.equal(h.body.kind, 'restore');
    assert.equal(h.body.job, restore.metadata!.name);
    const bad = (await admin(s.cluster).batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/server=chain-bad' })).items[0]!;
    assert.equal(bad.metadata!.annotations!['felis.lolicon.best/then-restore-reason'], 'snapshot_failed');
    assert.equal((await s.call('GET', '/api/v1/servers/chain-bad/holder')).body.held, false);
    // A second pass finds only the still-running chain, and leaves it.
    const again = await s.call('POST', '/api/v1/restore-chains/settle');
    assert.deepEqual(again.body.chains, []);
  });

  test('race: concurrent admissions and starts never admit two holders or start a held world', async () => {
    const ROUNDS = Number(process.env.FELIS_RACE_ROUNDS ?? 50);
    const CALLERS = 20;
    await createServer(s.cluster, 'racer', STOPPED);
    const api = new KubeServerApi(s.cluster.kubeConfig(s.cluster.tokenFor('minecraft', 'felis-world')));
    const lock = new WorldLock(api, { namespace: 'minecraft' });
    // An admission makes one call more than a start (it also lists game Pods), so with equal head
    // starts the starts win almost every round, against the real apiserver more than ever. In every
    // other round the starters wait about one admission longer, so both kinds win rounds.
    const t0 = performance.now();
    await (await lock.acquire('racer', 'file-write'))();
    const admissionMs = performance.now() - t0;
    let doubleAdmissions = 0;
    let heldStarts = 0;
    let admitted = 0;
    let started = 0;
    for (let round = 0; round < ROUNDS; round++) {
      await setServer(s.cluster, 'racer', { ...STOPPED, annotations: { [LOCK]: null } });
      const outcomes = await Promise.all(
        Array.from({ length: CALLERS }, async (_, i) => {
          // Half admit a mutation, half start the server; a random head start of up to 20 ms
          // lets either kind arrive first.
          await new Promise((r) => setTimeout(r, Math.random() * 20 + (i % 2 === 1 && round % 2 === 1 ? admissionMs : 0)));
          if (i % 2 === 0) {
            try {
              await lock.acquire('racer', 'file-write');
              return 'admitted';
            } catch (e) {
              if (e instanceof MaintenanceBusyError || e instanceof NotStoppedError) return 'refused';
              throw e;
            }
          }
          try {
            await lock.start('racer');
            return 'started';
          } catch (e) {
            if (e instanceof MaintenanceBusyError) return 'refused';
            throw e;
          }
        }),
      );
      const a = outcomes.filter((o) => o === 'admitted').length;
      const st = outcomes.filter((o) => o === 'started').length;
      admitted += a;
      started += st;
      if (a > 1) doubleAdmissions++;
      // No lock is ever released in a round: any start that succeeded alongside an admission
      // started a held world (or an admission was granted on a started server).
      if (a > 0 && st > 0) heldStarts++;
    }
    console.log(`race: ${ROUNDS} rounds x ${CALLERS} callers: ${admitted} admissions, ${started} starts, ${doubleAdmissions} double admissions, ${heldStarts} held starts`);
    assert.equal(doubleAdmissions, 0);
    assert.equal(heldStarts, 0);
    assert.ok(admitted > 0 && started > 0, 'both kinds of caller won some rounds');
  });
});

// Its own stack, after the one above is closed: on the cluster tier every stack shares the real
// control plane's namespace, so stacks never overlap.
describe('world maintenance with a short file timeout', () => {
  test('the lock is released after a runner timeout', async () => {
    const slow = await startStack({ editor: { timeoutMs: 800 } });
    try {
      slow.cluster.faults.pod('felis.lolicon.best/files-mode=write', { neverStart: true });
      const t = await put(slow, 'survival', 'x.txt', 'x');
      assert.equal(t.status, 504);
      const lockOfSlow = async () => (await getServer(slow.cluster, 'survival')).metadata.annotations?.[LOCK];
      assert.equal(await lockOfSlow(), undefined, 'released after a timeout');
    } finally {
      await slow.close();
    }
  });
});

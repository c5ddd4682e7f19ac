import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
import { configFromEnv } from '../config.ts';
import { LABEL_FILES_BROWSE } from '../job-spec/render.ts';
import { jobKind } from '../maintenance/holder.ts';
import { jobToken, tokenDigest } from '../protocol/job-token.ts';
import type { CallOptions, CallOutcome } from './call.ts';
import type { BrowseConfig } from './config.ts';
import { STUCK_AFTER_MS } from './session-finder.ts';
import { BrowseSessions } from './sessions.ts';

const KEY = Buffer.alloc(32, 3);
const NOW = Date.parse('2026-12-01T06:00:00Z');
const settings = configFromEnv({ FELIS_IMAGE: 'felis-world/files:dev' }).editor!;
const cfg: BrowseConfig = { keyFile: '/nonexistent', idleSeconds: 60, lifetimeSeconds: 540, startBudgetMs: 60, callTimeoutMs: 1000 };
const target = { server: 'survival', world: { claim: 'world-survival-0' } };

/** A Pod of a browse Job as the kubelet reports it. */
function pod(job: string, o: { phase?: string; ip?: string; startedAgoMs?: number; claim?: string; image?: string; running?: boolean } = {}): V1Pod {
  const started = new Date(NOW - (o.startedAgoMs ?? 1000)).toISOString();
  return {
    metadata: { name: `${job}-x1`, creationTimestamp: new Date(started) as unknown as Date, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: job, uid: 'u', controller: true }] },
    spec: {
      volumes: [{ name: 'world', persistentVolumeClaim: { claimName: o.claim ?? 'world-survival-0', readOnly: true } }],
      containers: [{ name: 'files', image: o.image ?? 'felis-world/files:dev' }],
    },
    status: {
      phase: o.phase ?? 'Running',
      podIP: o.ip,
      startTime: new Date(started) as unknown as Date,
      containerStatuses: [{ name: 'files', image: '', imageID: '', ready: true, restartCount: 0, state: o.running === false ? { waiting: { reason: 'ContainerCreating' } } : { running: {} } }],
    },
  };
}

function fake(pods: () => V1Pod[], answer: (o: CallOptions) => CallOutcome = () => ({ kind: 'ok', body: '{"sha256":"ab"}' }), c: BrowseConfig = cfg) {
  const created: V1Job[] = [];
  const calls: CallOptions[] = [];
  let lists = 0;
  const api = {
    async createJob(_ns: string, job: V1Job) {
      if (created.some((j) => j.metadata!.name === job.metadata!.name)) {
        throw new ApiException(409, 'AlreadyExists', JSON.stringify({ kind: 'Status', reason: 'AlreadyExists', code: 409 }), {});
      }
      created.push(job);
    },
    async listPods(_ns: string, selector: string) {
      lists++;
      assert.equal(selector, `felis.lolicon.best/server=survival,${LABEL_FILES_BROWSE}=true`);
      return pods();
    },
  };
  const sessions = new BrowseSessions(api, settings, c, {
    key: KEY,
    now: () => NOW,
    call: async (o) => {
      calls.push(o);
      return answer(o);
    },
  });
  return { sessions, api, created, calls, lists: () => lists };
}

test('a serving Pod is called with the token derived from its Job name, and its answer is returned as is', async () => {
  const f = fake(() => [pod('files-survival-b1', { ip: '127.1.0.9' })]);
  assert.equal(await f.sessions.run(target, 'read', 'server.properties'), '{"sha256":"ab"}');
  assert.equal(f.calls.length, 1);
  assert.deepEqual({ ip: f.calls[0]!.ip, port: f.calls[0]!.port, op: f.calls[0]!.op, path: f.calls[0]!.path }, { ip: '127.1.0.9', port: 8420, op: 'read', path: 'server.properties' });
  assert.equal(f.calls[0]!.token, jobToken(KEY, 'files-survival-b1'));
  assert.equal(f.created.length, 0, 'no Job is started while one serves');
});

test('with several serving Pods the oldest is used, so racing instances converge on one', async () => {
  const f = fake(() => [pod('files-survival-young', { ip: '127.1.0.2', startedAgoMs: 1000 }), pod('files-survival-old', { ip: '127.1.0.3', startedAgoMs: 5000 })]);
  await f.sessions.run(target, 'list', '');
  assert.equal(f.calls[0]!.ip, '127.1.0.3');
});

test('a Pod of another world, another image, near the end of its life, or without an address is not used', async () => {
  const f = fake(() => [
    pod('files-survival-a', { ip: '127.1.0.2', claim: 'world-other-0' }),
    pod('files-survival-b', { ip: '127.1.0.3', image: 'other:1' }),
    pod('files-survival-c', { ip: '127.1.0.4', startedAgoMs: 540_000 - 10_000 }),
    pod('files-survival-d', {}),
  ]);
  assert.equal(await f.sessions.run(target, 'read', 'a'), undefined);
  assert.equal(f.calls.length, 0);
});

test('with no session, the first request starts a read-only, non-holding browse Job and falls back after the budget', async () => {
  const f = fake(() => []);
  const t0 = performance.now();
  assert.equal(await f.sessions.run(target, 'read', 'a'), undefined);
  // It stops polling once another poll would overrun the budget.
  assert.ok(performance.now() - t0 >= cfg.startBudgetMs - 20, 'it waited for the session within the budget');
  assert.equal(f.created.length, 1, 'one Job, however many polls');
  const job = f.created[0]!;
  const name = job.metadata!.name!;
  assert.match(name, /^files-survival-b[0-9a-f]{15}$/);
  assert.equal(jobKind(job), undefined, 'a browse Job never holds the world');
  assert.equal(job.metadata!.labels![LABEL_FILES_BROWSE], 'true');
  const spec = job.spec!.template.spec!;
  assert.equal(spec.volumes![0]!.persistentVolumeClaim!.readOnly, true);
  const c = spec.containers[0]!;
  assert.equal(c.volumeMounts![0]!.readOnly, true);
  assert.deepEqual(c.args, ['--serve', '--worlds-root', '/data']);
  assert.deepEqual(c.resources!.requests, { cpu: '10m', memory: '32Mi' });
  const env = Object.fromEntries(c.env!.map((e) => [e.name, e.value ?? e.valueFrom?.fieldRef?.fieldPath]));
  assert.equal(env.FELIS_POD_IP, 'status.podIP');
  assert.equal(env.FELIS_SERVE_TOKEN_SHA256, tokenDigest(jobToken(KEY, name)));
  assert.ok(!JSON.stringify(job).includes(jobToken(KEY, name)), 'the token itself is nowhere in the Job');
  assert.equal(job.spec!.activeDeadlineSeconds, 600);
});

test("two instances starting at once create the same Job; the second one's AlreadyExists is absorbed", async () => {
  const f = fake(() => []);
  const g = new BrowseSessions(f.api, settings, cfg, { key: KEY, now: () => NOW, call: async () => ({ kind: 'ok', body: '{}' }) });
  const [a, b] = await Promise.all([f.sessions.run(target, 'list', ''), g.run(target, 'list', '')]);
  assert.equal(a, undefined);
  assert.equal(b, undefined);
  assert.equal(f.created.length, 1);
});

test('a session that comes up within the budget answers the first request', async () => {
  let polls = 0;
  const f = fake(() => (++polls >= 3 ? [pod('files-survival-b1', { ip: '127.1.0.7' })] : []));
  const slow = new BrowseSessions(f.api, settings, { ...cfg, startBudgetMs: 2000 }, { key: KEY, now: () => NOW, call: async () => ({ kind: 'ok', body: '{"entries":[]}' }) });
  assert.equal(await slow.run(target, 'list', ''), '{"entries":[]}');
});

test('a Pod that refuses the token, is busy or fails makes the request fall back; a starting Pod is waited for, a stuck one is not', async () => {
  for (const outcome of [{ kind: 'status', status: 401, detail: '' }, { kind: 'status', status: 503, detail: '' }, { kind: 'timeout' }] as CallOutcome[]) {
    const f = fake(
      () => [pod('files-survival-b1', { ip: '127.1.0.2' })],
      () => outcome,
    );
    assert.equal(await f.sessions.run(target, 'read', 'a'), undefined, JSON.stringify(outcome));
    assert.equal(f.calls.length, 1);
  }
  const starting = fake(() => [pod('files-survival-b1', { phase: 'Pending', running: false, startedAgoMs: 100 })]);
  assert.equal(await starting.sessions.run(target, 'read', 'a'), undefined);
  assert.ok(starting.lists() > 1, 'it polled for the starting Pod');
  assert.equal(starting.created.length, 0, 'no second Job while one starts');
  const stuck = fake(() => [pod('files-survival-b1', { phase: 'Pending', running: false, startedAgoMs: STUCK_AFTER_MS + 1 })]);
  assert.equal(await stuck.sessions.run(target, 'read', 'a'), undefined);
  assert.equal(stuck.lists(), 1, 'a stuck Pod is not waited for');
});

test('a just-closed kept-alive connection is retried once on a fresh one', async () => {
  let n = 0;
  const f = fake(
    () => [pod('files-survival-b1', { ip: '127.1.0.2' })],
    () => (++n === 1 ? { kind: 'unreachable', detail: 'ECONNRESET' } : { kind: 'ok', body: '{}' }),
  );
  assert.equal(await f.sessions.run(target, 'read', 'a'), '{}');
  assert.equal(f.calls.length, 2);
});

test('a failing Kubernetes API or a missing or short key means one-shot Jobs, never an error', async () => {
  const broken = new BrowseSessions({ createJob: async () => {}, listPods: async () => Promise.reject(new ApiException(403, 'Forbidden', '{}', {})) }, settings, cfg, { key: KEY });
  assert.equal(await broken.run(target, 'read', 'a'), undefined);
  const dir = mkdtempSync(join(tmpdir(), 'browse-key-'));
  try {
    writeFileSync(join(dir, 'short'), 'x'.repeat(31));
    for (const keyFile of [join(dir, 'missing'), join(dir, 'short')]) {
      let listed = false;
      const warnings: string[] = [];
      const s = new BrowseSessions({ createJob: async () => {}, listPods: async () => ((listed = true), []) }, settings, { ...cfg, keyFile }, { logger: { warn: (_o, m) => void warnings.push(m) } });
      assert.equal(await s.run(target, 'read', 'a'), undefined);
      assert.equal(await s.run(target, 'read', 'a'), undefined);
      assert.equal(listed, false);
      assert.equal(warnings.length, 1, 'warned once');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a caller that goes away is not answered by a fallback', async () => {
  const f = fake(() => []);
  const ac = new AbortController();
  const p = new BrowseSessions(f.api, settings, { ...cfg, startBudgetMs: 5000 }, { key: KEY, now: () => NOW }).run(target, 'read', 'a', ac.signal);
  setTimeout(() => ac.abort(new Error('gone')), 30);
  await assert.rejects(p, /gone/);
});

test('an instance calls the Pod that answered last without listing again, and lists again once that Pod stops answering', async () => {
  let ip = '127.1.0.9';
  const f = fake(
    () => [pod('files-survival-b1', { ip })],
    (o) => (o.ip === ip ? { kind: 'ok', body: `{"sha256":"${o.ip}"}` } : { kind: 'status', status: 401, detail: '' }),
  );
  await f.sessions.run(target, 'read', 'a');
  assert.equal(f.lists(), 1);
  await f.sessions.run(target, 'read', 'b');
  await f.sessions.run(target, 'list', '');
  assert.equal(f.lists(), 1, 'warm requests make no API call of their own');
  assert.deepEqual(
    f.calls.map((c) => c.path),
    ['a', 'b', ''],
  );
  // The session moved (a new Pod, a new address): the old address now refuses the token.
  ip = '127.1.0.10';
  assert.equal(await f.sessions.run(target, 'read', 'c'), '{"sha256":"127.1.0.10"}');
  assert.equal(f.lists(), 2);
  // Another world of the same name is not served from this hint.
  const other = { server: 'survival', world: { claim: 'world-other-0' } };
  assert.equal(await f.sessions.run(other, 'read', 'd'), undefined);
});

test('a serving Pod that cannot be reached is waited for only while it may still be starting its program', async () => {
  const young = fake(
    () => [pod('files-survival-b1', { ip: '127.1.0.2', startedAgoMs: 500 })],
    () => ({ kind: 'unreachable', detail: 'ECONNREFUSED' }),
  );
  assert.equal(await young.sessions.run(target, 'read', 'a'), undefined);
  assert.ok(young.calls.length > 1, 'a Pod just up is retried within the budget');
  const old = fake(
    () => [pod('files-survival-b1', { ip: '127.1.0.2', startedAgoMs: 60_000 })],
    () => ({ kind: 'unreachable', detail: 'connect timeout' }),
  );
  assert.equal(await old.sessions.run(target, 'read', 'a'), undefined);
  assert.equal(old.calls.length, 1, 'an unreachable Pod up for a minute is not waited for');
  assert.equal(old.created.length, 0);
});

test('a serving Pod just up that does not listen yet is asked again without listing, and answers once it listens', async () => {
  let refusals = 3;
  const f = fake(
    () => [pod('files-survival-b1', { ip: '127.1.0.2', startedAgoMs: 50 })],
    () => (refusals-- > 0 ? { kind: 'unreachable', detail: 'ECONNREFUSED' } : { kind: 'ok', body: '{"sha256":"cd"}' }),
    { ...cfg, startBudgetMs: 5000 },
  );
  assert.equal(await f.sessions.run(target, 'read', 'a'), '{"sha256":"cd"}');
  assert.equal(f.calls.length, 4, 'three refusals, then the answer');
  assert.equal(f.lists(), 1, 'the Pods are listed once, not again for each refusal');
});

test('an early call to the remembered Pod answers the request once the gates pass, with no second call and no listing', async () => {
  const f = fake(
    () => [pod('files-survival-b1', { ip: '127.1.0.9' })],
    (o) => ({ kind: 'ok', body: `{"path":"${o.path}"}` }),
  );
  assert.equal(f.sessions.early('survival', 'read', 'a'), undefined, 'nothing remembered yet: no early call');
  await f.sessions.run(target, 'read', 'a');
  const early = f.sessions.early('survival', 'read', 'b');
  assert.ok(early);
  // The call is already on its way before run (the gates' answer) comes.
  assert.deepEqual(
    f.calls.map((c) => c.path),
    ['a', 'b'],
  );
  assert.equal(await f.sessions.run(target, 'read', 'b', undefined, early), '{"path":"b"}');
  assert.equal(f.calls.length, 2);
  assert.equal(f.lists(), 1);
  assert.equal(f.sessions.early('creative', 'read', 'b'), undefined, 'another server has its own hint');
});

test('an early call is cancelled when the gates refuse, and its answer is never used for another world or request', async () => {
  const f = fake(
    () => [pod('files-survival-b1', { ip: '127.1.0.9' }), pod('files-survival-b2', { ip: '127.1.0.7', claim: 'world-moved-0' })],
    (o) => ({ kind: 'ok', body: `{"ip":"${o.ip}","path":"${o.path}"}` }),
  );
  await f.sessions.run(target, 'read', 'a');
  // The gates refused: the route cancels, which aborts the call's signal.
  const refused = f.sessions.early('survival', 'read', 'x')!;
  refused.cancel();
  assert.equal(f.calls.at(-1)!.signal?.aborted, true);
  // The server now names another claim: the early answer (from the old world's Pod) is thrown away.
  const moved = { server: 'survival', world: { claim: 'world-moved-0' } };
  const stale = f.sessions.early('survival', 'read', 'y')!;
  assert.equal(await f.sessions.run(moved, 'read', 'y', undefined, stale), '{"ip":"127.1.0.7","path":"y"}');
  assert.equal(f.calls.at(-2)!.signal?.aborted, true, 'the early call to the old world was cancelled');
  // An early call made for another path is not an answer to this one.
  const otherPath = f.sessions.early('survival', 'read', 'z1')!;
  assert.equal(await f.sessions.run(moved, 'read', 'z2', undefined, otherPath), '{"ip":"127.1.0.7","path":"z2"}');
});

test('an early call that finds the Pod gone falls back to listing; one that took the whole call timeout runs the one-shot Job', async () => {
  let gone = false;
  const f = fake(
    () => [pod('files-survival-b1', { ip: gone ? '127.1.0.5' : '127.1.0.9' })],
    (o) => (o.ip === '127.1.0.9' && gone ? { kind: 'unreachable', detail: 'ECONNREFUSED' } : { kind: 'ok', body: `{"ip":"${o.ip}"}` }),
  );
  await f.sessions.run(target, 'read', 'a');
  gone = true;
  const e = f.sessions.early('survival', 'read', 'b')!;
  assert.equal(await f.sessions.run(target, 'read', 'b', undefined, e), '{"ip":"127.1.0.5"}');
  assert.equal(f.lists(), 2);
  const slow = fake(
    () => [pod('files-survival-b1', { ip: '127.1.0.9' })],
    (o) => (o.path === 'slow' ? { kind: 'timeout' } : { kind: 'ok', body: '{}' }),
  );
  await slow.sessions.run(target, 'read', 'a');
  const t = slow.sessions.early('survival', 'read', 'slow')!;
  assert.equal(await slow.sessions.run(target, 'read', 'slow', undefined, t), undefined);
  assert.equal(slow.lists(), 1, 'a Pod that timed out is not asked again for this request');
});

test("an op's query goes to the Pod with the call (only its set fields), and an early call for another query is not this one's answer", async () => {
  const f = fake(
    () => [pod('files-survival-b1', { ip: '127.1.0.9' })],
    (o) => ({ kind: 'ok', body: JSON.stringify({ q: o.query ?? null }) }),
  );
  assert.equal(await f.sessions.run(target, 'list', 'world', undefined, undefined, { limit: 2, after: 'a', q: undefined }), '{"q":{"limit":2,"after":"a"}}');
  assert.equal(await f.sessions.run(target, 'list', 'world'), '{"q":null}', 'no query: none sent');
  const early = f.sessions.early('survival', 'list', 'world', undefined, { limit: 5 })!;
  assert.equal(await f.sessions.run(target, 'list', 'world', undefined, early, { limit: 6 }), '{"q":{"limit":6}}');
  assert.equal(f.calls.at(-2)!.signal?.aborted, true, 'the early call for limit 5 was cancelled');
  const same = f.sessions.early('survival', 'list', 'world', undefined, { limit: 7, q: 'x' })!;
  const before = f.calls.length;
  assert.equal(await f.sessions.run(target, 'list', 'world', undefined, same, { limit: 7, q: 'x' }), '{"q":{"limit":7,"q":"x"}}');
  assert.equal(f.calls.length, before, 'the early call answered');
});

test('start: false asks only a Pod already serving: with none, or one still starting, no Job is made and nothing is waited for', async () => {
  const none = fake(() => []);
  const t0 = performance.now();
  assert.equal(await none.sessions.run(target, 'list', 'plugins', undefined, undefined, { q: 'x', limit: 5 }, { start: false }), undefined);
  assert.ok(performance.now() - t0 < cfg.startBudgetMs, 'answered at once, not after the start budget');
  assert.equal(none.created.length, 0, 'no browse Job started');
  assert.equal(none.lists(), 1);
  const starting = fake(() => [pod('files-survival-s', { running: false, startedAgoMs: 100 })]);
  assert.equal(await starting.sessions.run(target, 'list', 'plugins', undefined, undefined, undefined, { start: false }), undefined);
  assert.equal(starting.created.length, 0);
  assert.equal(starting.lists(), 1, 'a starting Pod is not polled for');
  const warm = fake(() => [pod('files-survival-w', { ip: '127.1.0.7' })]);
  assert.equal(await warm.sessions.run(target, 'list', 'plugins', undefined, undefined, { q: 'x', limit: 5 }, { start: false }), '{"sha256":"ab"}');
  assert.deepEqual(warm.calls[0]!.query, { q: 'x', limit: 5 });
});

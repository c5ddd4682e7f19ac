import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
import { configFromEnv } from '../config.ts';
import { EditLostError } from '../files/edit-channel.ts';
import { LABEL_FILES_EDIT } from '../job-spec/render.ts';
import { jobKind } from '../maintenance/holder.ts';
import { jobToken, tokenDigest } from '../protocol/job-token.ts';
import { JobLostError } from '../runner/errors.ts';
import type { BrowseConfig } from './config.ts';
import type { EditCallOptions, EditOutcome } from './edit-call.ts';
import { EditSessions } from './edit-sessions.ts';

const KEY = Buffer.alloc(32, 5);
const NOW = Date.parse('2026-12-01T06:00:00Z');
const settings = configFromEnv({ FELIS_IMAGE: 'felis-world/files:dev' }).editor!;
const cfg: BrowseConfig = { keyFile: '/nonexistent', idleSeconds: 60, lifetimeSeconds: 540, startBudgetMs: 60, callTimeoutMs: 1000, edits: true };
const target = { server: 'survival', world: { claim: 'world-survival-0' } };
const CALL = { argv: ['files', '--op', 'mkdir', '--path', 'a', '--worlds-root', '/data'], env: {}, lock: 'file-write@2026-12-01T06:00:00Z' };
const signal = () => new AbortController().signal;

function pod(job: string, o: { ip?: string; startedAgoMs?: number; claim?: string } = {}): V1Pod {
  const started = new Date(NOW - (o.startedAgoMs ?? 1000));
  return {
    metadata: { name: `${job}-x1`, creationTimestamp: started, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: job, uid: 'u', controller: true }] },
    spec: { volumes: [{ name: 'world', persistentVolumeClaim: { claimName: o.claim ?? 'world-survival-0' } }], containers: [{ name: 'files', image: 'felis-world/files:dev' }] },
    status: { phase: 'Running', podIP: o.ip, startTime: started, containerStatuses: [{ name: 'files', image: '', imageID: '', ready: true, restartCount: 0, state: { running: {} } }] },
  };
}

function fake(pods: () => V1Pod[], answer: (o: EditCallOptions) => EditOutcome = () => ({ kind: 'ok', body: '{}' })) {
  const created: V1Job[] = [];
  const calls: EditCallOptions[] = [];
  let lists = 0;
  const api = {
    async createJob(_ns: string, job: V1Job) {
      if (created.some((j) => j.metadata!.name === job.metadata!.name)) throw new ApiException(409, 'AlreadyExists', JSON.stringify({ kind: 'Status', reason: 'AlreadyExists', code: 409 }), {});
      created.push(job);
    },
    async listPods(_ns: string, selector: string) {
      lists++;
      assert.equal(selector, `felis.lolicon.best/server=survival,${LABEL_FILES_EDIT}=true`);
      return pods();
    },
  };
  const ended: { ip: string; token: string }[] = [];
  const sessions = new EditSessions(api, settings, cfg, { key: KEY, now: () => NOW, call: async (o) => (calls.push(o), answer(o)), end: async (o) => void ended.push(o) });
  return { sessions, created, calls, ended, lists: () => lists };
}

test("a serving edit Pod gets the call with its Job's token; the next call goes straight to it, with no API request", async () => {
  const f = fake(() => [pod('files-survival-e1', { ip: '127.1.0.9' })]);
  assert.equal(await f.sessions.run(target, CALL, signal()), '{}');
  assert.equal(f.calls[0]!.token, jobToken(KEY, 'files-survival-e1'));
  assert.deepEqual(f.calls[0]!.call, CALL);
  assert.equal(await f.sessions.run(target, CALL, signal()), '{}');
  assert.equal(f.lists(), 1, 'the hint saved the second listing');
  assert.equal(f.created.length, 0);
});

test('no edit Pod: one is started (a Job that never holds the world, mounting it read-write), and the change goes to the one-shot Job at once', async () => {
  const f = fake(() => []);
  const t0 = performance.now();
  assert.equal(await f.sessions.run(target, CALL, signal()), undefined);
  assert.ok(performance.now() - t0 < cfg.startBudgetMs, 'not waited for');
  assert.equal(f.lists(), 1);
  assert.equal(f.created.length, 1);
  const job = f.created[0]!;
  assert.equal(jobKind(job), undefined, 'not a holder');
  assert.equal(job.metadata!.labels![LABEL_FILES_EDIT], 'true');
  const spec = job.spec!.template.spec!;
  assert.equal(spec.volumes![0]!.persistentVolumeClaim!.readOnly, false);
  assert.deepEqual(spec.containers[0]!.args, ['--serve', '--edit', '--worlds-root', settings.worldsRoot]);
  const digest = spec.containers[0]!.env!.find((e) => e.name === 'FELIS_SERVE_TOKEN_SHA256')!.value;
  assert.equal(digest, tokenDigest(jobToken(KEY, job.metadata!.name!)));
});

test('a refusal before the program ran (token, lease, busy) or an unreachable Pod: nothing changed, the one-shot Job decides', async () => {
  for (const out of [
    { kind: 'refused', status: 409, detail: 'lease' },
    { kind: 'refused', status: 401, detail: '' },
  ] as EditOutcome[]) {
    const f = fake(
      () => [pod('files-survival-e1', { ip: '127.1.0.9' })],
      () => out,
    );
    assert.equal(await f.sessions.run(target, CALL, signal()), undefined);
    assert.equal(f.calls.length, 1);
  }
  // Unreachable and up for a while: not waited for.
  const f = fake(
    () => [pod('files-survival-e1', { ip: '127.1.0.9', startedAgoMs: 60_000 })],
    () => ({ kind: 'unsent', detail: 'ECONNREFUSED' }),
  );
  assert.equal(await f.sessions.run(target, CALL, signal()), undefined);
  assert.equal(f.created.length, 0);
});

test('a call that reached the program and got no result is JobLostError: the change may have been made, so it is never made again by a Job', async () => {
  const f = fake(
    () => [pod('files-survival-e1', { ip: '127.1.0.9' })],
    () => ({ kind: 'lost', detail: 'ECONNRESET', inFlight: true }),
  );
  await assert.rejects(f.sessions.run(target, CALL, signal()), (err: unknown) => err instanceof EditLostError && err instanceof JobLostError && err.inFlight && /ECONNRESET/.test(err.message));
});

test('a hint that no longer answers is dropped and the Pods listed again; a Pod of another world is never called', async () => {
  let pods = [pod('files-survival-e1', { ip: '127.1.0.9' })];
  const f = fake(
    () => pods,
    (o) => (o.ip === '127.1.0.9' && pods[0]!.status!.podIP !== '127.1.0.9' ? { kind: 'unsent', detail: 'ECONNREFUSED' } : { kind: 'ok', body: `{"via":"${o.ip}"}` }),
  );
  assert.equal(await f.sessions.run(target, CALL, signal()), '{"via":"127.1.0.9"}');
  pods = [pod('files-survival-e2', { ip: '127.1.0.10' })];
  assert.equal(await f.sessions.run(target, CALL, signal()), '{"via":"127.1.0.10"}');
  assert.equal(f.lists(), 2);
  const other = fake(() => [pod('files-survival-e3', { ip: '127.1.0.11', claim: 'another-claim' })]);
  assert.equal(await other.sessions.run(target, CALL, signal()), undefined);
  assert.equal(other.calls.length, 0);
});

test('an aborted caller ends the wait with its reason', async () => {
  const f = fake(() => []);
  const ac = new AbortController();
  ac.abort(new Error('gone'));
  await assert.rejects(f.sessions.run(target, CALL, ac.signal), /gone/);
});

test('a server found not stopped ends the session this instance called, with its token, and forgets it; with none known, nothing is sent', async () => {
  const f = fake(() => [pod('files-survival-e1', { ip: '127.1.0.9' })]);
  await f.sessions.end('survival');
  assert.equal(f.ended.length, 0);
  await f.sessions.run(target, CALL, signal());
  await f.sessions.end('survival');
  assert.deepEqual(f.ended, [{ ip: '127.1.0.9', port: 8420, token: jobToken(KEY, 'files-survival-e1') }]);
  await f.sessions.run(target, CALL, signal());
  assert.equal(f.lists(), 2, 'the hint went with the end');
});

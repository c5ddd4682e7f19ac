/**
 * CloudEvents end to end through the embedded (or real) cluster and the real client-node: a write
 * delivered three times as one event changes the file once and gets one answer three times; a
 * backup Job's change delivered as an ApiServerSource event settles its chain; a PingSource tick
 * settles a chain whose change event was lost; and the same with no test sending anything, the
 * cluster's own ApiServerSource and PingSource delivering.
 */

import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { pino } from 'pino';
import { startApiServerSource, startPingSource } from '../cluster/event-sources.ts';
import { admin, createPendingChain, restoreTemplateFile } from './support/servers.ts';
import { type Stack, startStack, TIER, TOKEN, tierMs } from './support/stack.ts';

const sha = (b: string) => createHash('sha256').update(b).digest('hex');
const b64 = (s: string) => Buffer.from(s).toString('base64');

interface Delivery {
  mode: 'binary' | 'structured';
  type: string;
  source: string;
  id: string;
  data: unknown;
  subject?: string;
  token?: boolean;
}

/** Posts one CloudEvent to the functions' event entry, as a Broker or a source would. */
async function deliver(s: Stack, d: Delivery): Promise<{ status: number; body: any; text: string }> {
  const auth: Record<string, string> = d.token ? { authorization: `Bearer ${TOKEN}` } : {};
  const init: RequestInit =
    d.mode === 'binary'
      ? {
          method: 'POST',
          headers: {
            ...auth,
            'content-type': 'application/json',
            'ce-specversion': '1.0',
            'ce-id': d.id,
            'ce-source': d.source,
            'ce-type': d.type,
            ...(d.subject ? { 'ce-subject': d.subject } : {}),
          },
          body: JSON.stringify(d.data),
        }
      : {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/cloudevents+json' },
          body: JSON.stringify({ specversion: '1.0', id: d.id, source: d.source, type: d.type, datacontenttype: 'application/json', ...(d.subject ? { subject: d.subject } : {}), data: d.data }),
        };
  const res = await fetch(s.url + '/', init);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

/** A finished safety-backup Job whose chain waits to be settled. */
function pendingChain(s: Stack, server: string): Promise<V1Job> {
  return createPendingChain(s.cluster, server, tierMs(10_000, 60_000));
}

async function chainState(s: Stack, server: string): Promise<{ label: string | undefined; restores: number }> {
  const jobs = (await admin(s.cluster).batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: `felis.lolicon.best/server=${server}` })).items;
  return {
    label: jobs.find((j) => j.metadata!.name === `snap-${server}`)?.metadata?.labels?.['felis.lolicon.best/then-restore'],
    restores: jobs.filter((j) => j.metadata!.labels!['app.kubernetes.io/managed-by'] === 'felis-restore').length,
  };
}

describe(`CloudEvents through the ${TIER} cluster`, () => {
  let s: Stack;
  const logs: string[] = [];
  before(async () => {
    // A Job TTL long enough that the redeliveries below fall inside the idempotency window.
    const sink = new Writable({
      write(chunk, _e, cb) {
        logs.push(chunk.toString());
        cb();
      },
    });
    s = await startStack({ restoreTemplate: restoreTemplateFile(), editor: { ttlSeconds: 6000 }, logger: pino({ level: 'info' }, sink) });
  });
  after(async () => {
    await s?.close();
  });

  test('one write event delivered three times changes the file once and gets the same answer three times', { timeout: tierMs(60_000, 240_000) }, async () => {
    const file = join(s.world, 'events.txt');
    const event = {
      type: 'dev.felis.files.write',
      source: '/apis/v1/namespaces/minecraft/pingsources/editor',
      id: randomUUID(),
      data: { server: 'survival', path: 'events.txt', body: { content: b64('one\n'), content_sha256: sha('one\n'), create_only: true } },
      token: true,
    };
    const first = await deliver(s, { ...event, mode: 'binary' });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body, { path: 'events.txt', status: 'written', sha256: sha('one\n') });
    // Changed behind the event's back: a second write would clobber this (create_only would refuse it).
    writeFileSync(file, 'changed by hand\n');

    const second = await deliver(s, { ...event, mode: 'structured' });
    const third = await deliver(s, { ...event, mode: 'binary' });
    assert.equal(second.status, 200, second.text);
    assert.equal(third.status, 200, third.text);
    assert.deepEqual(second.body, first.body);
    assert.deepEqual(third.body, first.body);
    assert.equal(readFileSync(file, 'utf8'), 'changed by hand\n');
    const jobs = (await admin(s.cluster).batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/files-mode=write' })).items;
    const labelled = jobs.filter((j) => j.metadata?.labels?.['felis.lolicon.best/event']);
    assert.equal(labelled.length, 1, 'one file Job for the one event');

    // A new event id is a new request: it runs, and create_only now refuses it.
    // 412, not the HTTP 409: a Broker would retry a 409, and this one can never succeed.
    const fresh = await deliver(s, { ...event, id: randomUUID(), mode: 'binary' });
    assert.equal(fresh.status, 412, fresh.text);
    assert.equal(fresh.body.error.code, 'file_exists');
    assert.equal(readFileSync(file, 'utf8'), 'changed by hand\n');
  });

  test('the same event id with another request is 409 event_conflict and does not run; the same request again is answered from the first', { timeout: tierMs(60_000, 240_000) }, async () => {
    const id = randomUUID();
    const event = { type: 'dev.felis.files.write', source: '/tests/conflict', id, token: true };
    const body = (text: string) => ({ content: b64(text), content_sha256: sha(text) });
    const first = await deliver(s, { ...event, mode: 'binary', data: { server: 'survival', path: 'conflict-a.txt', body: body('a\n') } });
    assert.equal(first.status, 200, first.text);
    // Another path, then the same path with other content: neither runs.
    const otherPath = await deliver(s, { ...event, mode: 'binary', data: { server: 'survival', path: 'conflict-b.txt', body: body('a\n') } });
    assert.equal(otherPath.status, 409, otherPath.text);
    assert.equal(otherPath.body.error.code, 'event_conflict');
    assert.ok(!existsSync(join(s.world, 'conflict-b.txt')), 'the second write did not happen');
    const otherContent = await deliver(s, { ...event, mode: 'structured', data: { server: 'survival', path: 'conflict-a.txt', body: body('b\n') } });
    assert.equal(otherContent.status, 409, otherContent.text);
    assert.equal(otherContent.body.error.code, 'event_conflict');
    assert.equal(readFileSync(join(s.world, 'conflict-a.txt'), 'utf8'), 'a\n');
    const again = await deliver(s, { ...event, mode: 'structured', data: { server: 'survival', path: 'conflict-a.txt', body: body('a\n') } });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.body, first.body);
  });

  test('an unauthenticated 1.8 MB event is refused before it is read, and no log line grows with it', async () => {
    const before = logs.length;
    const res = await fetch(s.url + '/', {
      method: 'POST',
      headers: { 'content-type': 'application/cloudevents+json' },
      body: JSON.stringify({ specversion: '1.0', id: 'i'.repeat(1_800_000), source: '/x', type: 'dev.felis.files.write', data: {} }),
    });
    // Served together with the settle function, a tokenless structured event might be one of its
    // source ticks (small): 413 on its Content-Length. A function without such types says 401.
    const text = await res.text();
    assert.ok(res.status === 401 || res.status === 413, text);
    const lines = logs.slice(before);
    for (const l of lines) assert.ok(l.length < 2048, `a log line of ${l.length} bytes`);
  });

  test('a backup Job change delivered as an ApiServerSource event settles its chain', { timeout: tierMs(60_000, 240_000) }, async () => {
    const job = await pendingChain(s, 'chain-watched');
    assert.deepEqual(await chainState(s, 'chain-watched'), { label: 'pending', restores: 0 });
    const r = await deliver(s, {
      mode: 'binary',
      type: 'dev.knative.apiserver.resource.update',
      source: 'https://10.96.0.1:443',
      subject: `/apis/batch/v1/namespaces/minecraft/jobs/${job.metadata!.name}`,
      id: randomUUID(),
      data: { apiVersion: 'batch/v1', kind: 'Job', ...job },
    });
    assert.equal(r.status, 200, r.text);
    assert.ok(
      r.body.chains.some((c: { job: string; state: string }) => c.job === 'snap-chain-watched' && c.state === 'started'),
      r.text,
    );
    assert.deepEqual(await chainState(s, 'chain-watched'), { label: 'started', restores: 1 });
  });

  test('a PingSource tick settles a chain whose change event was lost', { timeout: tierMs(60_000, 240_000) }, async () => {
    await pendingChain(s, 'chain-lost');
    assert.deepEqual(await chainState(s, 'chain-lost'), { label: 'pending', restores: 0 });
    const tick = { mode: 'structured' as const, type: 'dev.knative.sources.ping', source: '/apis/v1/namespaces/minecraft/pingsources/felis-settle', data: {} };
    const r = await deliver(s, { ...tick, id: randomUUID() });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(await chainState(s, 'chain-lost'), { label: 'started', restores: 1 });
    // The next tick finds nothing left to do for it: still one restore.
    const again = await deliver(s, { ...tick, id: randomUUID() });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(await chainState(s, 'chain-lost'), { label: 'started', restores: 1 });
  });

  /** Waits until a chain reaches `label` (bounded). */
  async function settled(server: string, label: string): Promise<{ label: string | undefined; restores: number }> {
    const end = Date.now() + tierMs(15_000, 60_000);
    for (;;) {
      const st = await chainState(s, server);
      if (st.label === label || Date.now() > end) return st;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  test("the cluster's ApiServerSource carries a finished backup Job to settle: a chain settles with no caller", { timeout: tierMs(60_000, 240_000) }, async () => {
    const source = startApiServerSource({
      kubeConfig: s.cluster.kubeConfig(s.cluster.adminToken),
      namespace: 'minecraft',
      labelSelector: 'app.kubernetes.io/managed-by=felis-backup',
      sink: s.url + '/',
      pollMs: 100,
    });
    try {
      // Let the source take its first list, so the backup Job is a change it reports.
      await new Promise((r) => setTimeout(r, 300));
      await pendingChain(s, 'chain-sourced');
      assert.deepEqual(await settled('chain-sourced', 'started'), { label: 'started', restores: 1 });
    } finally {
      await source.stop();
    }
  });

  test("the cluster's PingSource settles a chain nobody reported", { timeout: tierMs(60_000, 240_000) }, async () => {
    await pendingChain(s, 'chain-ticked');
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(await chainState(s, 'chain-ticked'), { label: 'pending', restores: 0 }, 'nothing settles it without an event');
    const ping = startPingSource({ sink: s.url + '/', namespace: 'minecraft', name: 'felis-world-settle-tick', periodMs: 200 });
    try {
      assert.deepEqual(await settled('chain-ticked', 'started'), { label: 'started', restores: 1 });
      // More ticks change nothing: still one restore.
      await new Promise((r) => setTimeout(r, 600));
      assert.deepEqual(await chainState(s, 'chain-ticked'), { label: 'started', restores: 1 });
    } finally {
      await ping.stop();
    }
  });
});

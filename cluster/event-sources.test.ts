import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { deliver, jobChangeEvent, jobChanges, pingEvent } from './event-sources.ts';

const job = (uid: string, rv: number, name = uid): V1Job => ({ metadata: { uid, name, namespace: 'minecraft', resourceVersion: String(rv) } });
const byUid = (...jobs: V1Job[]) => new Map(jobs.map((j) => [j.metadata!.uid!, j]));

test('job changes: new is add, a new resourceVersion is update, gone is delete, in resourceVersion order', () => {
  const before = byUid(job('a', 5), job('b', 6), job('c', 7));
  const after = byUid(job('a', 5), job('b', 9), job('d', 8));
  assert.deepEqual(
    jobChanges(before, after).map((c) => [c.change, c.job.metadata!.uid]),
    [
      ['delete', 'c'],
      ['add', 'd'],
      ['update', 'b'],
    ],
  );
  assert.deepEqual(jobChanges(after, after), []);
});

test('a Job change event has the real adapter attributes: type, subject, kind/name/namespace extensions, the object as data', () => {
  const ev = jobChangeEvent('https://10.96.0.1:443', 'update', job('u1', 3, 'snap-survival'));
  assert.equal(ev.type, 'dev.knative.apiserver.resource.update');
  assert.equal(ev.source, 'https://10.96.0.1:443');
  assert.equal(ev.subject, '/apis/batch/v1/namespaces/minecraft/jobs/snap-survival');
  assert.equal(ev.kind, 'Job');
  assert.equal(ev.name, 'snap-survival');
  assert.equal(ev.namespace, 'minecraft');
  assert.deepEqual((ev.data as V1Job & { kind: string }).kind, 'Job');
  assert.notEqual(jobChangeEvent('s', 'update', job('u1', 3)).id, jobChangeEvent('s', 'update', job('u1', 3)).id, 'every id is new');
  const ping = pingEvent('minecraft', 'tick');
  assert.equal(ping.type, 'dev.knative.sources.ping');
  assert.equal(ping.source, '/apis/v1/namespaces/minecraft/pingsources/tick');
});

test('delivery retries 404/409/429/5xx with back-off, gives up after 5 retries, and stops at a final 4xx', async () => {
  const statuses: number[] = [];
  let script: number[] = [];
  const srv = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const status = script.shift() ?? 200;
      statuses.push(status);
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const sink = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/`;
  try {
    script = [503, 429, 200];
    assert.equal(await deliver(sink, pingEvent('ns', 'p')), true);
    assert.deepEqual(statuses.splice(0), [503, 429, 200]);
    script = [500, 500, 500, 500, 500, 500, 500];
    assert.equal(await deliver(sink, pingEvent('ns', 'p')), false);
    assert.equal(statuses.splice(0).length, 6, 'the first attempt and 5 retries');
    script = [400, 200];
    assert.equal(await deliver(sink, pingEvent('ns', 'p')), false);
    assert.deepEqual(statuses.splice(0), [400]);
  } finally {
    srv.close();
  }
});

import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { HTTP } from 'cloudevents';
import { filesDelete } from '../../functions/files-delete/app.ts';
import { KubeAuthorizer } from '../auth/authorizer.ts';
import type { AuthConfig } from '../auth/config.ts';
import { FakeReviewer } from '../auth/fake-reviewer.test-kit.ts';
import { kubernetesAuth } from '../http/auth.ts';
import { jsonCall } from '../testing/json-call.ts';
import { routeKit } from '../testing/route-kit.ts';
import { emit, MAX_IN_FLIGHT } from './emit.ts';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A sink on 127.0.0.1 that answers after `delayMs`; closes itself when the test ends. */
async function sink(delayMs = 0, status = 202) {
  const got: Received[] = [];
  let arrived: () => void = () => {};
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      arrived();
      setTimeout(() => res.writeHead(status).end(), delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    got,
    next: () => new Promise<void>((r) => (arrived = r)),
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

test('with K_SINK a successful delete is also sent as a dev.felis.audit.file.delete CloudEvent, and the answer does not wait for the sink', async (t) => {
  const s = await sink(1500);
  t.after(() => s.close());
  const before = process.env.K_SINK;
  process.env.K_SINK = s.url;
  t.after(() => (before === undefined ? delete process.env.K_SINK : (process.env.K_SINK = before)));
  const kit = routeKit(filesDelete);
  const arrived = s.next();
  const t0 = performance.now();
  const r = await kit.call('DELETE', '/api/v1/servers/survival/file?path=old.txt');
  assert.equal(r.status, 200, r.text);
  assert.ok(performance.now() - t0 < 1000, 'the answer waited for the sink');
  await arrived;
  const ev = HTTP.toEvent({ headers: s.got[0]!.headers as Record<string, string>, body: s.got[0]!.body }) as { type: string; subject?: string; data: Record<string, unknown>; id: string };
  assert.equal(ev.type, 'dev.felis.audit.file.delete');
  assert.equal(ev.subject, 'survival:old.txt');
  assert.equal(ev.data.target, 'survival:old.txt');
  assert.equal(ev.data.request_id, r.headers.get('x-request-id'));
  assert.equal(ev.data.actor, 'bearer');
});

test("in kubernetes auth mode the audit CloudEvent names the reviewed user, and the ServiceAccount's <ns>/<name>", async (t) => {
  const s = await sink();
  t.after(() => s.close());
  const before = process.env.K_SINK;
  process.env.K_SINK = s.url;
  t.after(() => (before === undefined ? delete process.env.K_SINK : (process.env.K_SINK = before)));
  const cfg: AuthConfig = { mode: 'kubernetes', audience: 'felis-world', eventAudience: 'felis-world', namespace: 'minecraft', allowTtlMs: 1000, denyTtlMs: 1000, cacheSize: 10 };
  const reviewer = new FakeReviewer().user('tok', 'system:serviceaccount:players:alice', [{ permission: 'update minecraftservers/files' }]);
  const kit = routeKit(filesDelete, { auth: (logger) => kubernetesAuth(new KubeAuthorizer(reviewer, cfg), cfg, logger) });
  const arrived = s.next();
  const r = await jsonCall((p, init) => kit.app.request(p, init), 'tok', 'DELETE', '/api/v1/servers/survival/file?path=old.txt');
  assert.equal(r.status, 200, r.text);
  await arrived;
  const ev = HTTP.toEvent({ headers: s.got[0]!.headers as Record<string, string>, body: s.got[0]!.body }) as { data: Record<string, unknown> };
  assert.equal(ev.data.actor, 'system:serviceaccount:players:alice');
  assert.equal(ev.data.actor_service_account, 'players/alice');
});

test('without K_SINK nothing is sent; the audit line is the record', async (t) => {
  const s = await sink();
  t.after(() => s.close());
  const kit = routeKit(filesDelete);
  const before = process.env.K_SINK;
  delete process.env.K_SINK;
  t.after(() => (before === undefined ? undefined : (process.env.K_SINK = before)));
  const r = await kit.call('DELETE', '/api/v1/servers/survival/file?path=old.txt');
  assert.equal(r.status, 200);
  await new Promise((res) => setTimeout(res, 100));
  assert.equal(s.got.length, 0);
  assert.equal(kit.audits().length, 1);
});

test('a sink that refuses or cannot be reached costs a log line with the event id, never the request', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = { warn: (o: Record<string, unknown>, msg: string) => lines.push({ ...o, msg }) } as never;
  const s = await sink(0, 503);
  emit({ type: 'dev.felis.restore.chain.started', subject: 'snap-a', data: { job: 'snap-a' } }, logger, { K_SINK: s.url });
  await s.next();
  await new Promise((res) => setTimeout(res, 50));
  await s.close();
  emit({ type: 'dev.felis.restore.chain.started', data: {} }, logger, { K_SINK: s.url });
  for (let i = 0; i < 100 && lines.length < 2; i++) await new Promise((res) => setTimeout(res, 20));
  assert.equal(lines[0]!.msg, 'event send refused by the sink');
  assert.equal(lines[0]!.status, 503);
  assert.equal(lines[1]!.msg, 'event send failed');
  for (const l of lines) assert.match(String(l.event_id), /^[0-9a-f-]{36}$/);
});

test('sends past the in-flight bound are dropped and logged, not queued without end', async (t) => {
  const s = await sink(2000);
  t.after(() => s.close());
  const lines: string[] = [];
  const logger = { warn: (_o: unknown, msg: string) => lines.push(msg) } as never;
  const env = { K_SINK: s.url + 'bound' };
  for (let i = 0; i < MAX_IN_FLIGHT + 3; i++) emit({ type: 't', data: {} }, logger, env);
  assert.deepEqual(lines, Array(3).fill('event dropped: too many sends in flight'));
});

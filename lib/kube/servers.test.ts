import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { kubeStatus } from './errors.ts';
import { KubeServerApi } from './servers.ts';

/** A loopback apiserver stand-in: answers from `routes` by path, records what it was asked. */
async function fakeApiserver(routes: Record<string, [number, object]>) {
  const asked: { path: string; auth?: string; accept?: string }[] = [];
  const server = http.createServer((req, res) => {
    asked.push({ path: req.url!, auth: req.headers.authorization, accept: req.headers.accept });
    const [code, body] = routes[req.url!] ?? [404, { kind: 'Status', code: 404, reason: 'NotFound', message: 'not found' }];
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'fn-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return { api: new KubeServerApi(kc), asked, close: () => (server.closeAllConnections(), server.close()) };
}

const SERVER = '/apis/felis.lolicon.best/v1alpha1/namespaces/minecraft/minecraftservers/survival';

test('the server and claim reads: the object (a claim as its access modes), or undefined when it does not exist, with the caller token', async (t) => {
  const f = await fakeApiserver({
    [SERVER]: [200, { apiVersion: 'felis.lolicon.best/v1alpha1', kind: 'MinecraftServer', metadata: { name: 'survival' }, spec: { desiredState: 'Stopped' } }],
    '/api/v1/namespaces/minecraft/persistentvolumeclaims/world-survival-0': [
      200,
      { kind: 'PersistentVolumeClaim', metadata: { name: 'world-survival-0' }, spec: { accessModes: ['ReadWriteOncePod'] } },
    ],
    '/api/v1/namespaces/minecraft/persistentvolumeclaims/no-modes': [200, { kind: 'PersistentVolumeClaim', metadata: { name: 'no-modes' }, spec: { accessModes: 'ReadWriteOnce' } }],
  });
  t.after(() => f.close());
  const s = await f.api.getServer('minecraft', 'survival');
  assert.equal(s?.spec?.desiredState, 'Stopped');
  assert.equal(await f.api.getServer('minecraft', 'nobody'), undefined);
  assert.deepEqual(await f.api.getClaim('minecraft', 'world-survival-0'), { accessModes: ['ReadWriteOncePod'] });
  // Modes that are not a list of strings are no modes.
  assert.deepEqual(await f.api.getClaim('minecraft', 'no-modes'), { accessModes: [] });
  // A name is one path segment, whatever it holds.
  assert.equal(await f.api.getClaim('minecraft', '../secrets/x'), undefined);
  assert.deepEqual(f.asked.at(-1), { path: '/api/v1/namespaces/minecraft/persistentvolumeclaims/..%2Fsecrets%2Fx', auth: 'Bearer fn-token', accept: 'application/json' });
  assert.ok(f.asked.every((a) => a.auth === 'Bearer fn-token'));
});

test('any other status is an API error with its Status, as client-node reports them', async (t) => {
  const f = await fakeApiserver({
    [SERVER]: [403, { kind: 'Status', code: 403, reason: 'Forbidden', message: 'minecraftservers is forbidden' }],
    '/api/v1/namespaces/minecraft/persistentvolumeclaims/w': [500, { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd down' }],
  });
  t.after(() => f.close());
  await assert.rejects(f.api.getServer('minecraft', 'survival'), (e: unknown) => kubeStatus(e)?.code === 403 && kubeStatus(e)?.reason === 'Forbidden');
  await assert.rejects(f.api.getClaim('minecraft', 'w'), (e: unknown) => kubeStatus(e)?.code === 500 && kubeStatus(e)?.message === 'etcd down');
});

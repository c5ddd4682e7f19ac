import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { reuseConnections } from './connections.ts';

/** A loopback apiserver stand-in that answers any PVC read and counts the connections it accepts. */
async function countingServer() {
  let connections = 0;
  let closed = 0;
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: req.url!.split('/').pop() } }));
  });
  server.on('connection', (socket) => {
    connections++;
    socket.on('close', () => closed++);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    closed: () => closed,
    close: () => (server.closeAllConnections(), server.close()),
  };
}

function configFor(url: string): KubeConfig {
  const kc = new KubeConfig();
  // insecure-skip-tls-verify is one of the settings that made client-node build an Agent per call.
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'secret-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

async function readClaims(kc: KubeConfig, n: number): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  for (let i = 0; i < n; i++) {
    const pvc = await core.readNamespacedPersistentVolumeClaim({ namespace: 'minecraft', name: `w${i}` });
    assert.equal(pvc.metadata?.name, `w${i}`);
  }
}

// undici may open a second connection when a call starts in the same turn as the previous one
// ends (before that connection is back in its pool); after that the two are reused.
test('API calls through a KubeConfig share a pool of kept-alive connections', async (t) => {
  const s = await countingServer();
  t.after(() => s.close());
  await readClaims(reuseConnections(configFor(s.url)), 10);
  assert.ok(s.connections() <= 2, `${s.connections()} connections for 10 calls`);
});

test('without it, client-node opens a connection per call (what reuseConnections is for)', async (t) => {
  // If client-node starts pooling on its own, this fails and the module can go.
  const s = await countingServer();
  t.after(() => s.close());
  await readClaims(configFor(s.url), 3);
  assert.equal(s.connections(), 3);
});

test('different connection settings get their own pool; patching twice changes nothing', async (t) => {
  const a = await countingServer();
  const b = await countingServer();
  t.after(() => (a.close(), b.close()));
  const kcA = reuseConnections(reuseConnections(configFor(a.url)));
  const kcB = reuseConnections(configFor(b.url));
  await readClaims(kcA, 5);
  await readClaims(kcB, 5);
  await readClaims(kcA, 5);
  assert.ok(a.connections() <= 2, `${a.connections()} connections to a for 10 calls`);
  assert.ok(b.connections() <= 2, `${b.connections()} connections to b for 5 calls`);
});

test('when the connection settings change (a rotated CA or certificate), the oldest pools are closed, not kept forever', async (t) => {
  const servers = await Promise.all([1, 2, 3, 4, 5].map(() => countingServer()));
  t.after(() => {
    for (const s of servers) s.close();
  });
  const kc = reuseConnections(configFor(servers[0]!.url));
  for (const s of servers) {
    // The same KubeConfig pointed elsewhere: other connection settings, as a rotation gives.
    kc.loadFromOptions({ clusters: [{ name: 'c', server: s.url, skipTLSVerify: true }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
    await readClaims(kc, 2);
  }
  // Four pools are kept; the first one's kept-alive connections are closed once the fifth is made.
  const end = Date.now() + 2_000;
  while (servers[0]!.closed() < servers[0]!.connections() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  assert.equal(servers[0]!.closed(), servers[0]!.connections());
  assert.equal(servers[4]!.closed(), 0, 'the newest pool keeps its connection');
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { type TestCluster, testCluster, waitFor } from '../cluster.test-kit.ts';
import { PodIpPool } from './pod-ips.ts';

describe('pod address pool', () => {
  it('never hands out 127.0.0.1, an address ending in .0 or .255, or one address twice', () => {
    const pool = new PodIpPool();
    const seen = new Set<string>();
    for (let i = 0; i < 600; i++) {
      const ip = pool.allocate(`pod-${i}`);
      assert.match(ip, /^127\.\d+\.\d+\.\d+$/);
      assert.notEqual(ip, '127.0.0.1');
      assert.ok(!ip.endsWith('.0') && !ip.endsWith('.255'), ip);
      assert.ok(!seen.has(ip), `${ip} twice`);
      seen.add(ip);
    }
    assert.equal(pool.allocate('pod-7'), pool.addressOf('pod-7'), 'asking again gives the same address');
  });

  it('two pools (two clusters on one machine) start at different points of the range', () => {
    const a = new PodIpPool().allocate('x');
    const b = new PodIpPool().allocate('x');
    // A 1 in 16 million chance of a false failure.
    assert.notEqual(a, b);
  });

  it('a freed address comes back only after the rest of the range, and a full range refuses', () => {
    // 127.1.0.1 .. 127.1.0.3: three addresses.
    const first = (127 << 24) | (1 << 16) | 1;
    const pool = new PodIpPool({ first, last: first + 2, start: first });
    const a = pool.allocate('a');
    const b = pool.allocate('b');
    pool.release('a');
    const c = pool.allocate('c');
    assert.notEqual(c, a, 'the address freed a moment ago is not the next one');
    assert.equal(pool.allocate('d'), a, 'it comes back once the others are taken');
    assert.throws(() => pool.allocate('e'), /no free pod address/);
    pool.release('b');
    assert.equal(pool.allocate('e'), b);
    assert.equal(pool.size, 3);
  });
});

/** A Job whose container prints the downward-API address and stays up until told to stop. */
function sleeper(name: string, ms: number): V1Job {
  return {
    metadata: { name },
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'main',
              image: 'busybox:1.36',
              command: ['sh', '-c', `echo "ip=$POD_IP"; sleep ${ms / 1000}`],
              env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
            },
          ],
        },
      },
    },
  };
}

describe('kubelet pod addresses', () => {
  let t: TestCluster;
  before(async () => {
    t = await testCluster();
  });
  after(() => t.close());

  const podOf = (job: string, pred: (p: V1Pod) => boolean) =>
    waitFor(async () => (await t.core.listNamespacedPod({ namespace: 'minecraft', labelSelector: `job-name=${job}` })).items.find(pred), `pod of ${job}`, 8000);

  it('each running Pod has its own loopback podIP, the same one its fieldRef env sees', async () => {
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: sleeper('ip-a', 600) });
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: sleeper('ip-b', 600) });
    const a = await podOf('ip-a', (p) => p.status?.phase === 'Running' && !!p.status.podIP);
    const b = await podOf('ip-b', (p) => p.status?.phase === 'Running' && !!p.status.podIP);
    const ipA = a.status!.podIP!;
    const ipB = b.status!.podIP!;
    assert.match(ipA, /^127\./);
    assert.notEqual(ipA, '127.0.0.1');
    assert.notEqual(ipA, ipB, 'two running Pods never share an address');
    assert.deepEqual(
      a.status!.podIPs?.map((x) => x.ip),
      [ipA],
    );
    assert.equal(a.status!.hostIP, '127.0.0.1');
    const logA = await waitFor(async () => {
      const l = await t.core.readNamespacedPodLog({ namespace: 'minecraft', name: a.metadata!.name! });
      return l.includes('ip=') ? l : undefined;
    }, 'log of ip-a');
    assert.equal(logA.trim(), `ip=${ipA}`);
    await podOf('ip-a', (p) => p.status?.phase === 'Succeeded');
    await podOf('ip-b', (p) => p.status?.phase === 'Succeeded');
  });

  it('an address is released when its Pod ends', async () => {
    const inUse = () => t.cluster.podAddressesInUse();
    await waitFor(() => inUse() === 0 || undefined, 'addresses of finished Pods released');
    await t.batch.createNamespacedJob({ namespace: 'minecraft', body: sleeper('ip-c', 300) });
    await podOf('ip-c', (p) => p.status?.phase === 'Running' && !!p.status.podIP);
    assert.equal(inUse(), 1);
    await podOf('ip-c', (p) => p.status?.phase === 'Succeeded');
    await waitFor(() => inUse() === 0 || undefined, 'address of ip-c released');
  });
});

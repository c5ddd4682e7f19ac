import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { BatchV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { RBAC_MANIFEST, shJob, statusOf, waitFor } from './cluster.test-kit.ts';
import { startCluster } from './index.ts';
import { minecraftServers } from './kinds/custom.ts';
import { jobs } from './kinds/job.ts';
import { persistentVolumeClaims, pods } from './kinds/pod.ts';
import { ClusterStateUnreadableError, DataDirInUseError, PersistentState } from './persist.ts';
import { Registry } from './registry.ts';
import { Store } from './store.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'felis-persist-'));
  dirs.push(d);
  return d;
}

const DEFS = [jobs, pods, persistentVolumeClaims, minecraftServers];
const NS = ['minecraft', 'default'];

function open(dir: string): { state: PersistentState; store: Store; registry: Registry } {
  const state = PersistentState.open(dir);
  const store = new Store(NS, state);
  return { state, store, registry: new Registry(store, DEFS) };
}

const server = (name: string, annotations?: Record<string, string>) => ({
  apiVersion: 'felis.lolicon.best/v1alpha1',
  kind: 'MinecraftServer',
  metadata: { name, ...(annotations ? { annotations } : {}) },
  spec: { desiredState: 'Stopped' },
});

describe('the persistent store (cluster.sqlite)', () => {
  it('objects, annotations and the resourceVersion counter survive a reopen', () => {
    const dir = tmp();
    const a = open(dir);
    const mcs = a.registry.byResource('minecraftservers');
    const created = a.registry.create(mcs, 'minecraft', server('survival', { 'felis.lolicon.best/maintenance': 'file-write@2026-01-01T00:00:00Z' })).obj;
    a.registry.create(mcs, 'minecraft', server('creative'));
    a.registry.delete(mcs, 'minecraft', 'creative');
    const lastRv = Number(a.store.resourceVersion());
    a.state.close();

    const b = open(dir);
    const got = b.registry.get(b.registry.byResource('minecraftservers'), 'minecraft', 'survival');
    assert.deepEqual(got, created);
    assert.equal(b.store.has('minecraftservers', 'minecraft', 'creative'), false, 'a deletion is kept too');
    assert.equal(b.store.resourceVersion(), String(lastRv));
    // New writes continue the order: never a resourceVersion handed out before.
    const next = b.registry.create(b.registry.byResource('minecraftservers'), 'minecraft', server('hardcore')).obj;
    assert.ok(Number(next.metadata.resourceVersion) > lastRv);
    b.state.close();
  });

  it('a write with a resourceVersion from before the restart is a 409 Conflict after it', () => {
    const dir = tmp();
    const a = open(dir);
    const def = a.registry.byResource('minecraftservers');
    const v1 = a.registry.create(def, 'minecraft', server('survival')).obj;
    a.registry.update(def, 'minecraft', 'survival', (cur) => ({ ...cur, spec: { desiredState: 'Running' } }));
    a.state.close();

    const b = open(dir);
    assert.throws(
      () =>
        b.registry.update(b.registry.byResource('minecraftservers'), 'minecraft', 'survival', (cur) => ({
          ...cur,
          metadata: { ...cur.metadata, resourceVersion: v1.metadata.resourceVersion },
          spec: { desiredState: 'Stopped' },
        })),
      (err: { code?: number }) => err.code === 409,
    );
    assert.equal(b.registry.get(b.registry.byResource('minecraftservers'), 'minecraft', 'survival').spec.desiredState, 'Running');
    b.state.close();
  });

  it('a second owner of the same data directory is refused while the first has it, and admitted after', () => {
    const dir = tmp();
    const a = PersistentState.open(dir);
    assert.throws(
      () => PersistentState.open(dir),
      (err) => err instanceof DataDirInUseError && /in use by another embedded cluster/.test(err.message),
    );
    a.close();
    PersistentState.open(dir).close();
  });

  it('a file that is not the cluster state is refused with a clear error and left as it is', () => {
    const dir = tmp();
    const junk = Buffer.alloc(8192, 0x41);
    writeFileSync(join(dir, 'cluster.sqlite'), junk);
    assert.throws(
      () => PersistentState.open(dir),
      (err) => err instanceof ClusterStateUnreadableError && /move it away/.test(err.message),
    );
    assert.deepEqual(readFileSync(join(dir, 'cluster.sqlite')), junk);
  });

  it('a process killed in the middle of a transaction leaves the previous committed state', async () => {
    const dir = tmp();
    // The child commits one object, then starts a batch of 50 and is killed half-way through it.
    const child = `
      const { PersistentState } = await import(${JSON.stringify(join(import.meta.dirname, 'persist.ts'))});
      const s = PersistentState.open(${JSON.stringify(dir)});
      const obj = (name, rv) => ({ metadata: { namespace: 'minecraft', name, resourceVersion: String(rv) } });
      s.put('minecraftservers', obj('committed', 1001), 1001);
      s.atomically(() => {
        for (let i = 0; i < 50; i++) {
          s.put('minecraftservers', obj('torn-' + i, 1002 + i), 1002 + i);
          if (i === 25) { process.stdout.write('mid\\n'); const end = Date.now() + 30000; while (Date.now() < end) {} }
        }
      });
    `;
    const proc = spawn(process.execPath, ['--input-type=module', '-e', child], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((r) => proc.once('exit', r));
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('child never reached the middle of its transaction')), 20_000);
      proc.stdout!.on('data', (b: Buffer) => {
        if (b.toString().includes('mid')) {
          clearTimeout(t);
          resolve();
        }
      });
    });
    proc.kill('SIGKILL');
    await exited;
    const s = PersistentState.open(dir);
    const saved = s.load()!;
    s.close();
    assert.deepEqual(
      saved.objects.map((o) => o.object.metadata.name),
      ['committed'],
    );
    assert.equal(saved.resourceVersion, 1001);
  });

  it('the process journal survives a reopen and forgets a Pod as a whole', () => {
    const dir = tmp();
    const a = PersistentState.open(dir);
    a.record({ podUid: 'u1', container: 'main', namespace: 'minecraft', pod: 'p1', pid: 4242, startTicks: '99' });
    a.record({ podUid: 'u2', container: 'main', namespace: 'minecraft', pod: 'p2', pid: 4243, startTicks: '100' });
    a.forget('u1');
    a.close();
    const b = PersistentState.open(dir);
    assert.deepEqual(b.list(), [{ podUid: 'u2', container: 'main', namespace: 'minecraft', pod: 'p2', pid: 4243, startTicks: '100' }]);
    b.close();
  });
});

describe('a persistent embedded cluster across restarts', () => {
  it('a finished Job (its counts, its released Pod), a lock annotation and the 409 on a stale write survive a cluster restart', async () => {
    const dataDir = tmp();
    const first = await startCluster({ dataDir, rbacManifest: RBAC_MANIFEST, backoffScale: 0.001, persist: true });
    const kc = first.kubeConfig(first.adminToken);
    const batch = kc.makeApiClient(BatchV1Api);
    await batch.createNamespacedJob({ namespace: 'minecraft', body: shJob('done-before', 'exit 0') });
    const done = await waitFor(async () => {
      const j = await batch.readNamespacedJob({ name: 'done-before', namespace: 'minecraft' });
      return (j.status?.conditions ?? []).some((c) => c.type === 'Complete') ? j : undefined;
    }, 'the Job to complete');
    const custom = kc.makeApiClient(CustomObjectsApi);
    const mc = { group: 'felis.lolicon.best', version: 'v1alpha1', namespace: 'minecraft', plural: 'minecraftservers' };
    await custom.createNamespacedCustomObject({ ...mc, body: server('survival') });
    await custom.patchNamespacedCustomObject(
      { ...mc, name: 'survival', body: { metadata: { annotations: { 'felis.lolicon.best/maintenance': 'backup@2026-12-01T00:00:00Z' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await first.close();

    const second = await startCluster({ dataDir, rbacManifest: RBAC_MANIFEST, backoffScale: 0.001, persist: true });
    try {
      const kc2 = second.kubeConfig(second.adminToken);
      const batch2 = kc2.makeApiClient(BatchV1Api);
      // Give the controller a pass over the loaded Job: it must not count its Pod a second time.
      await new Promise((r) => setTimeout(r, 300));
      const j = await batch2.readNamespacedJob({ name: 'done-before', namespace: 'minecraft' });
      assert.equal(j.status?.succeeded, 1);
      const s = (await kc2.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ ...mc, name: 'survival' })) as { metadata: { annotations: Record<string, string> } };
      assert.equal(s.metadata.annotations['felis.lolicon.best/maintenance'], 'backup@2026-12-01T00:00:00Z');
      // A tracked Pod whose count is already in the Job was released before the restart.
      const podList = await kc2.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'minecraft' });
      for (const p of podList.items) assert.deepEqual(p.metadata?.finalizers ?? [], []);
      const stale = await statusOf(
        batch2.replaceNamespacedJob({
          name: 'done-before',
          namespace: 'minecraft',
          body: { ...done, metadata: { ...done.metadata, resourceVersion: String(Number(done.metadata!.resourceVersion) - 1) } },
        }),
      );
      assert.equal(stale.code, 409);
    } finally {
      await second.close();
    }
  });
});

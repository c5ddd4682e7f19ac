/**
 * Reads while the server runs, end to end on both tiers: with `survival` Running on the node its
 * status names, every read route (list, paged and filtered list, search, read, the download of a
 * file and of a folder, the trash listing, the ops listing) answers 200 with its rules intact
 * (server.properties redacted, the forwarding secret refused, the working names hidden), by Jobs
 * pinned to that node, and says the world was running; a change is still 409 not_stopped; a
 * ReadWriteOncePod claim is 409 volume_exclusive; and a held world refuses a change with a numeric
 * Retry-After.
 */

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type V1Job } from '@kubernetes/client-node';
import { LABEL_FILES_BROWSE } from '../lib/job-spec/render.ts';
import { kubeStatus } from '../lib/kube/errors.ts';
import { GRACE_MS, lockValue } from '../lib/maintenance/holder.ts';
import { admin, createJob, createServer, holderJob, RUNNING, STOPPED, setServer } from './support/servers.ts';
import { q, REAL, type Stack, startStack, tierMs, until } from './support/stack.ts';

const S = '/api/v1/servers/survival';
const LOCK = 'felis.lolicon.best/maintenance';
const NODE_SELECTOR = 'felis.node-restriction.kubernetes.io/identity';
const sha = (b: string) => createHash('sha256').update(b).digest('hex');

describe('reads while the server runs', () => {
  let s: Stack;
  /** The Jobs made while the server was stopped (the delete): not pinned, not looked at. */
  let stoppedJobs: Set<string>;
  before(async () => {
    s = await startStack({ browse: {}, downloads: {} });
    // A region file, and a trash record made while the server was stopped.
    mkdirSync(join(s.world, 'world', 'region'), { recursive: true });
    writeFileSync(join(s.world, 'world', 'region', 'r.0.0.mca'), randomBytes(8192));
    writeFileSync(join(s.world, 'old.txt'), 'gone soon\n');
    const d = await s.call('DELETE', `${S}/file?path=old.txt`);
    assert.equal(d.status, 200, d.text);
    // Started: Running, ready, on the node the embedded kubelet (and the real tier's) is.
    await setServer(s.cluster, 'survival', RUNNING);
    const custom = s.cluster.kubeConfig(s.cluster.adminToken).makeApiClient(CustomObjectsApi);
    await custom.patchNamespacedCustomObjectStatus(
      { group: 'felis.lolicon.best', version: 'v1alpha1', namespace: 'minecraft', plural: 'minecraftservers', name: 'survival', body: { status: { nodeName: 'local' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    stoppedJobs = new Set((await survivalJobs()).map((j) => j.metadata!.name!));
  });
  after(async () => {
    await s?.close();
  });

  /** The Jobs of survival made since it started. */
  const survivalJobs = async (): Promise<V1Job[]> =>
    (await admin(s.cluster).batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/server=survival' })).items.filter((j) => !stoppedJobs?.has(j.metadata!.name!));

  test('list (plain, paged, filtered), search and read answer 200 with their rules, world_state running, no lock', async () => {
    const root = await s.call('GET', `${S}/files`);
    assert.equal(root.status, 200, root.text);
    assert.equal(root.body.world_state, 'running');
    const names = root.body.entries.map((e: { name: string }) => e.name);
    assert.ok(names.includes('server.properties') && names.includes('world'), names.join(', '));
    assert.ok(!names.some((n: string) => n.startsWith('.felis-')), `working names hidden: ${names.join(', ')}`);

    const page = await s.call('GET', `${S}/files?limit=2`);
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.world_state, 'running');
    assert.equal(page.body.entries.length, 2);
    assert.equal(page.body.next, page.body.entries[1].name);
    const filtered = await s.call('GET', `${S}/files?path=config&q=PAPER`);
    assert.equal(filtered.status, 200, filtered.text);
    assert.equal(filtered.body.world_state, 'running');
    const secret = filtered.body.entries.find((e: { name: string }) => e.name === 'paper-global.yml');
    assert.equal(secret?.size, 0, 'the forwarding secret is listed with size 0');

    const region = await s.call('GET', `${S}/files?path=${q('world/region')}`);
    assert.deepEqual(
      region.body.entries.map((e: { name: string; size: number }) => [e.name, e.size]),
      [['r.0.0.mca', 8192]],
    );

    const found = await s.call('GET', `${S}/files/search?q=level`);
    assert.equal(found.status, 200, found.text);
    assert.ok(
      found.body.matches.some((m: { path: string }) => m.path === 'world/level.dat'),
      found.text,
    );

    const props = await s.call('GET', `${S}/file?path=server.properties`);
    assert.equal(props.status, 200, props.text);
    const text = Buffer.from(props.body.content, 'base64').toString();
    assert.ok(!text.includes('hunter2') && text.includes('rcon.password=<redacted by felis>'), text);
    const withheld = await s.call('GET', `${S}/file?path=${q('config/paper-global.yml')}`);
    assert.equal(withheld.status, 400);
    assert.equal(withheld.body.error.code, 'bad_path');

    // Every read ran (or started its browse session, which outlives them) on the server's node; nothing took the world.
    const jobs = await survivalJobs();
    assert.ok(
      jobs.some((j) => j.metadata!.labels![LABEL_FILES_BROWSE] === 'true'),
      'a browse session serves the running server',
    );
    for (const j of jobs) assert.equal(j.spec!.template.spec!.nodeSelector?.[NODE_SELECTOR], 'local', j.metadata!.name);
    const server = (await admin(s.cluster).custom.getNamespacedCustomObject({
      group: 'felis.lolicon.best',
      version: 'v1alpha1',
      namespace: 'minecraft',
      plural: 'minecraftservers',
      name: 'survival',
    })) as { metadata: { annotations?: Record<string, string> } };
    assert.equal(server.metadata.annotations?.[LOCK], undefined);
  });

  test('a file and a folder download, X-Felis-World-State: running; the trash and ops listings answer', async () => {
    const sign = async (path: string, dir = false) => {
      const r = await s.call('POST', `${S}/files/download?path=${q(path)}${dir ? '&dir=true' : ''}`);
      assert.equal(r.status, 200, r.text);
      return fetch(new URL(r.body.url, s.url));
    };
    const exportsPinned = async () => {
      const exports = (await survivalJobs()).filter((j) => j.metadata!.labels!['app.kubernetes.io/managed-by'] === 'felis-export');
      for (const j of exports) assert.equal(j.spec!.template.spec!.nodeSelector?.[NODE_SELECTOR], 'local', j.metadata!.name);
      return exports.length;
    };
    const file = await sign('server.properties');
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('x-felis-world-state'), 'running');
    // Its export Job is there while it serves (a finished one may soon be gone by its TTL).
    assert.ok((await exportsPinned()) >= 1);
    const text = await file.text();
    assert.ok(!text.includes('hunter2') && text.includes('rcon.password=<redacted by felis>'), text);
    const folder = await sign('world', true);
    assert.equal(folder.status, 200);
    assert.equal(folder.headers.get('x-felis-world-state'), 'running');
    assert.equal(folder.headers.get('content-type'), 'application/zip');
    const zip = Buffer.from(await folder.arrayBuffer());
    assert.equal(zip.subarray(0, 2).toString(), 'PK');
    assert.ok(zip.includes('world/region/r.0.0.mca'), 'the region file is in the zip');
    await exportsPinned();

    const trash = await s.call('GET', `${S}/files/trash`);
    assert.equal(trash.status, 200, trash.text);
    assert.deepEqual(
      trash.body.items.map((i: { paths: string[] }) => i.paths),
      [['old.txt']],
    );
    const ops = await s.call('GET', `${S}/files/ops`);
    assert.equal(ops.status, 200, ops.text);
    assert.ok(Array.isArray(ops.body.ops));
  });

  test('a change of the running server is still 409 not_stopped, and changes nothing', async () => {
    const id = (await s.call('GET', `${S}/files/trash`)).body.items[0].id;
    for (const [m, p, body] of [
      ['PUT', `${S}/file?path=new.txt`, { content: Buffer.from('x').toString('base64'), content_sha256: sha('x') }],
      ['POST', `${S}/files/mkdir?path=d`, undefined],
      ['DELETE', `${S}/file?path=eula.txt`, undefined],
      ['POST', `${S}/files/trash/${id}/restore`, {}],
    ] as const) {
      const r = await s.call(m, p, body);
      assert.equal(r.status, 409, `${m} ${p}: ${r.text}`);
      assert.equal(r.body.error.code, 'not_stopped');
      assert.equal(r.headers.get('retry-after'), null);
    }
    const names = (await s.call('GET', `${S}/files`)).body.entries.map((e: { name: string }) => e.name);
    assert.ok(names.includes('eula.txt') && !names.includes('new.txt') && !names.includes('d') && !names.includes('old.txt'), names.join(', '));
  });

  test('a running server whose claim is ReadWriteOncePod: reads are 409 volume_exclusive', async () => {
    await createServer(s.cluster, 'exclusive', RUNNING, false);
    try {
      await admin(s.cluster).core.createNamespacedPersistentVolumeClaim({
        namespace: 'minecraft',
        body: { metadata: { name: 'world-exclusive-0' }, spec: { accessModes: ['ReadWriteOncePod'], resources: { requests: { storage: '1Gi' } } } },
      });
    } catch (err) {
      // Kubernetes has the mode from 1.22 on. The cluster tier's v1.20 apiserver refuses it, so no
      // claim there can be exclusive: that refusal is what this tier can show.
      if (REAL && kubeStatus(err)?.code === 422) {
        assert.match(kubeStatus(err)?.message ?? '', /ReadWriteOncePod/);
        return;
      }
      throw err;
    }
    for (const [m, p] of [
      ['GET', '/api/v1/servers/exclusive/files'],
      ['GET', '/api/v1/servers/exclusive/file?path=server.properties'],
      ['GET', '/api/v1/servers/exclusive/files/search?q=level'],
      ['GET', '/api/v1/servers/exclusive/files/trash'],
      ['POST', '/api/v1/servers/exclusive/files/download?path=server.properties'],
    ] as const) {
      const r = await s.call(m, p);
      assert.equal(r.status, 409, `${m} ${p}: ${r.text}`);
      assert.equal(r.body.error.code, 'volume_exclusive');
      assert.match(r.body.error.message, /ReadWriteOncePod.*stop the server first/);
    }
    const jobs = (await admin(s.cluster).batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/server=exclusive' })).items;
    assert.equal(jobs.length, 0, 'no Job was made for a read that could never start');
  });

  test('a held world refuses a change with 409 maintenance_in_progress and a numeric Retry-After', async () => {
    await setServer(s.cluster, 'survival', STOPPED);
    const put = () => s.call('PUT', `${S}/file?path=held.txt`, { content: Buffer.from('x').toString('base64'), content_sha256: sha('x') });
    // A lock taken 115 s ago lapses in 5 s at most: the answer says no later than that.
    await setServer(s.cluster, 'survival', { annotations: { [LOCK]: lockValue('backup', new Date(Date.now() - GRACE_MS + 5_000)) } });
    const locked = await put();
    assert.equal(locked.status, 409, locked.text);
    assert.equal(locked.body.error.code, 'maintenance_in_progress');
    const lockRetry = Number(locked.headers.get('retry-after'));
    assert.ok(Number.isInteger(lockRetry) && lockRetry >= 1 && lockRetry <= 5, `Retry-After ${locked.headers.get('retry-after')}`);
    await setServer(s.cluster, 'survival', { annotations: { [LOCK]: null } });
    // A backup Job of Felis's shape holds it: a backup's 30 s.
    await createJob(s.cluster, holderJob('mc-backup-running-reads', 'survival', 'felis-backup', ['sh', '-c', 'sleep 30']));
    await until(async () => ((await s.call('GET', `${S}/holder`)).body.held ? true : undefined), 'the backup Job holds the world', tierMs(10_000, 30_000));
    const held = await put();
    assert.equal(held.status, 409, held.text);
    assert.equal(held.body.error.code, 'maintenance_in_progress');
    assert.equal(held.body.error.message, "a backup is running on this server's world; retry once it finishes");
    assert.match(held.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal(held.headers.get('retry-after'), '30');
    // The start is refused alike.
    const start = await s.call('POST', `${S}/start`);
    assert.equal(start.status, 409);
    assert.equal(start.headers.get('retry-after'), '30');
  });
});

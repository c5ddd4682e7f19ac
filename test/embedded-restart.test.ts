/**
 * `npm start` tried as a user would, with crashes and restarts: the service (scripts/start.ts over
 * a FELIS_DATA in a temporary folder, on a loopback port) is killed with its whole process group
 * in the middle of a write and started again. Every process this file starts is its own group
 * and is killed in `after`; every wait is bounded.
 */

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BatchV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions, type V1Job } from '@kubernetes/client-node';
import { lockValue } from '../lib/maintenance/holder.ts';
import { seedDemoWorld } from '../scripts/demo-world.ts';
import { checkedFetch, loadChecker } from './support/openapi-check.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TOKEN = 'embedded-restart-token';
// Every answer of `npm start` is held to docs/openapi.json (checked on this side: it runs in another process).
const checked = checkedFetch(loadChecker());
const LOCK = 'felis.lolicon.best/maintenance';
const mc = { group: 'felis.lolicon.best', version: 'v1alpha1', namespace: 'minecraft', plural: 'minecraftservers' };

const dirs: string[] = [];
const services = new Set<ChildProcess>();
/** Pod processes a test saw, so that `after` can end any a failing test left behind. */
const seen: { pid: number; start: string }[] = [];

after(() => {
  for (const p of services) killGroup(p.pid!);
  // Only a process that is still the one seen (same start time): a pid may have been reused.
  for (const p of seen) if (alive(p)) killGroup(p.pid);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function killGroup(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // gone already
  }
}

function freshData(): string {
  const d = mkdtempSync(join(tmpdir(), 'felis-restart-'));
  dirs.push(d);
  return d;
}

interface Service {
  proc: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  kube: { core: CoreV1Api; batch: BatchV1Api; custom: CustomObjectsApi };
}

/** SIGTERM to the service's group, then its exit. */
async function stopService(svc: Service): Promise<void> {
  killGroup(svc.proc.pid!, 'SIGTERM');
  await svc.exited;
}

/** Starts scripts/start.ts in its own process group and waits (at most 60 s) until it serves. */
async function startService(dataDir: string, env: Record<string, string> = {}): Promise<Service> {
  const proc = spawn(process.execPath, ['scripts/start.ts'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', FELIS_DATA: dataDir, PORT: '0', FELIS_TOKEN: TOKEN, LOG_LEVEL: 'warn', ...env },
  });
  services.add(proc);
  let out = '';
  proc.stdout!.on('data', (b) => (out += b));
  proc.stderr!.on('data', (b) => (out += b));
  const exited = new Promise<number | null>((r) =>
    proc.once('exit', (code) => {
      services.delete(proc);
      r(code);
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in 60 s:\n${out}`)), 60_000);
    const look = () => {
      const m = /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    proc.stdout!.on('data', look);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service exited (${code}) before serving:\n${out}`));
    });
  });
  const kc = new KubeConfig();
  kc.loadFromFile(join(dataDir, 'admin.kubeconfig'));
  return {
    proc,
    url,
    output: () => out,
    exited,
    async call(method, path, body, headers = {}) {
      const r = await checked.fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await r.text();
      return { status: r.status, body: text ? JSON.parse(text) : undefined };
    },
    kube: { core: kc.makeApiClient(CoreV1Api), batch: kc.makeApiClient(BatchV1Api), custom: kc.makeApiClient(CustomObjectsApi) },
  };
}

function writeBody(text: string) {
  const content = Buffer.from(text);
  return { content: content.toString('base64'), content_sha256: createHash('sha256').update(content).digest('hex') };
}

/** Every file under `dir` with its sha256, by relative path. */
function tree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(relative(dir, p), createHash('sha256').update(readFileSync(p)).digest('hex'));
    }
  };
  walk(dir);
  return out;
}

/** A running process of the delayed Job program whose working directory is under `dataDir`. */
function delayedJobProcesses(dataDir: string): { pid: number; start: string }[] {
  const out: { pid: number; start: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (!cmd.includes('felis-delayed') || !readlinkSync(`/proc/${name}/cwd`).startsWith(dataDir)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      out.push({ pid: Number(name), start: fields[19]! });
    } catch {
      // it ended while we looked
    }
  }
  return out;
}

function alive(p: { pid: number; start: string }): boolean {
  try {
    const stat = readFileSync(`/proc/${p.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] === p.start && fields[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Live processes whose process group is `pgid`. */
function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') out.push(Number(name));
    } catch {
      // it ended while we looked
    }
  }
  return out;
}

async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A world of the user's own, not the demo: the service must never write any of it. */
function ownWorld(dataDir: string): string {
  const w = join(dataDir, 'worlds', 'survival');
  mkdirSync(join(w, 'world'), { recursive: true });
  writeFileSync(join(w, 'server.properties'), 'motd=my own server\n');
  writeFileSync(join(w, 'world', 'level.dat'), Buffer.alloc(1800, 7));
  writeFileSync(join(w, 'target.txt'), 'old\n');
  return w;
}

test('the demo world is seeded into a missing or empty folder only, never into a world with anything in it', () => {
  const data = freshData();
  const world = join(data, 'worlds', 'survival');
  mkdirSync(join(data, 'worlds', '.seed-survival-1', 'config'), { recursive: true });
  seedDemoWorld(data);
  assert.ok(statSync(join(world, 'server.properties')).isFile());
  assert.deepEqual(readdirSync(join(data, 'worlds')), ['survival'], 'a staging folder left by a crash is dropped');

  const own = freshData();
  const ownWorldDir = join(own, 'worlds', 'survival');
  mkdirSync(join(ownWorldDir, 'world'), { recursive: true });
  writeFileSync(join(ownWorldDir, 'world', 'level.dat'), Buffer.alloc(1800, 9));
  const before = tree(ownWorldDir);
  seedDemoWorld(own);
  assert.deepEqual(tree(ownWorldDir), before, 'a world missing server.properties, eula.txt and config is left as it is');

  const empty = freshData();
  mkdirSync(join(empty, 'worlds', 'survival'), { recursive: true });
  seedDemoWorld(empty);
  assert.ok(statSync(join(empty, 'worlds', 'survival', 'eula.txt')).isFile(), 'an empty folder counts as missing');
});

test('a restart never writes an existing world: with server.properties deleted, every other file stays byte-identical', async () => {
  const data = freshData();
  const first = await startService(data);
  const world = join(data, 'worlds', 'survival');
  assert.ok(statSync(join(world, 'server.properties')).isFile(), 'the demo world is seeded into an empty FELIS_DATA');
  writeFileSync(join(world, 'world', 'level.dat'), Buffer.alloc(1800, 3));
  await stopService(first);
  unlinkSync(join(world, 'server.properties'));
  const before = tree(world);
  const second = await startService(data);
  try {
    assert.deepEqual(tree(world), before);
  } finally {
    await stopService(second);
  }
});

test('a second npm start on the same FELIS_DATA is refused with a clear message while the first runs', async () => {
  const data = freshData();
  const first = await startService(data);
  try {
    await assert.rejects(startService(data), /in use by another embedded cluster/);
  } finally {
    await stopService(first);
  }
});

test('SIGKILL of the whole service mid-write: the old Job is dead before the restart serves, the world is old, the lock still holds', async () => {
  const data = freshData();
  const world = ownWorld(data);
  const delayMs = 6000;
  // Edit sessions off: this is about a one-shot write Job the crash leaves behind.
  const svc = await startService(data, { FELIS_EMBEDDED_JOB_DELAY_MS: String(delayMs), FELIS_EDIT_SESSIONS: 'off' });
  const writeStarted = Date.now();
  const put = svc.call('PUT', '/api/v1/servers/survival/file?path=target.txt', writeBody('new\n')).catch(() => undefined);
  const [jobProc] = await until('the write Job to be running', () => {
    const ps = delayedJobProcesses(data);
    return ps.length ? ps : undefined;
  });
  seen.push(jobProc!);
  const jobs = (await svc.kube.batch.listNamespacedJob({ namespace: 'minecraft' })).items;
  assert.equal(jobs.length, 1);
  const jobName = jobs[0]!.metadata!.name!;
  const before = tree(world);

  killGroup(svc.proc.pid!);
  await svc.exited;
  await put;
  // The crash left the Job's process running in its own group: what the restart must end.
  assert.ok(alive(jobProc!), 'the Job process outlives a SIGKILL of the service');

  const again = await startService(data);
  try {
    assert.ok(!alive(jobProc!), `the old Job process ${jobProc!.pid} is dead once the service serves`);
    // The world is held until the cluster has settled the Job, and then still by the fresh lock.
    for (;;) {
      const h = await again.call('GET', '/api/v1/servers/survival/holder');
      assert.equal(h.status, 200);
      const job = (await again.kube.batch.readNamespacedJob({ name: jobName, namespace: 'minecraft' })) as V1Job;
      const settled = (job.status?.conditions ?? []).some((c) => c.type === 'Failed' && c.status === 'True');
      assert.equal(h.body.held, true, 'the world is held while the Job is unsettled, and by the lock after');
      if (settled) {
        assert.equal(h.body.source, 'lock');
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const pods = (await again.kube.core.listNamespacedPod({ namespace: 'minecraft', labelSelector: `job-name=${jobName}` })).items;
    assert.equal(pods.length, 1);
    assert.equal(pods[0]!.status?.phase, 'Failed');
    assert.equal(pods[0]!.status?.reason, 'NodeRestarted');
    // A fresh lock keeps refusing writes after the restart, and no Job is created for them. The
    // dead write's ticket heads the world's line until a Grace lapses, so a change joins and waits
    // behind it: `Prefer: wait=1` bounds that wait (30 s without it).
    const refused = await again.call('PUT', '/api/v1/servers/survival/file?path=other.txt', writeBody('x'), { prefer: 'wait=1' });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'maintenance_in_progress');
    assert.equal((await again.kube.batch.listNamespacedJob({ namespace: 'minecraft' })).items.length, 1);
    // Past the moment the old Job would have written: nothing changed.
    await new Promise((r) => setTimeout(r, Math.max(0, writeStarted + delayMs + 1500 - Date.now())));
    assert.equal(readFileSync(join(world, 'target.txt'), 'utf8'), 'old\n');
    assert.deepEqual(tree(world), before);
    assert.deepEqual(delayedJobProcesses(data), []);
    assert.deepEqual(groupMembers(jobProc!.pid), []);
  } finally {
    await stopService(again);
  }
});

test('a lock taken before a restart holds after it, and a Job created but not yet started runs after it', async () => {
  const data = freshData();
  const svc = await startService(data);
  await svc.kube.custom.patchNamespacedCustomObject(
    { ...mc, name: 'survival', body: { metadata: { annotations: { [LOCK]: lockValue('backup', new Date()) } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  // Its Pod mounts a claim that does not exist yet, so it cannot be scheduled before the restart.
  const marker = join(data, 'claims', 'minecraft', 'later', 'ran.txt');
  await svc.kube.batch.createNamespacedJob({
    namespace: 'minecraft',
    body: {
      metadata: { name: 'not-yet' },
      spec: {
        backoffLimit: 0,
        template: {
          spec: {
            restartPolicy: 'Never',
            volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'later' } }],
            containers: [{ name: 'main', image: 'x', command: ['sh', '-c', 'echo ran > "$OUT"'], env: [{ name: 'OUT', value: '/v/ran.txt' }], volumeMounts: [{ name: 'v', mountPath: '/v' }] }],
          },
        },
      },
    },
  });
  await until('the Pod to exist', async () => ((await svc.kube.core.listNamespacedPod({ namespace: 'minecraft' })).items.length ? true : undefined));
  killGroup(svc.proc.pid!);
  await svc.exited;

  const again = await startService(data);
  try {
    const h = await again.call('GET', '/api/v1/servers/survival/holder');
    assert.equal(h.body.held, true);
    assert.equal(h.body.kind, 'backup');
    assert.equal(h.body.source, 'lock');
    assert.equal((await again.call('POST', '/api/v1/servers/survival/start')).status, 409);
    await again.kube.core.createNamespacedPersistentVolumeClaim({
      namespace: 'minecraft',
      body: { metadata: { name: 'later' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    });
    const done = await until('the Job to complete', async () => {
      const job = await again.kube.batch.readNamespacedJob({ name: 'not-yet', namespace: 'minecraft' });
      return (job.status?.conditions ?? []).find((c) => c.status === 'True' && (c.type === 'Complete' || c.type === 'Failed'));
    });
    assert.equal(done.type, 'Complete');
    assert.equal(readFileSync(marker, 'utf8'), 'ran\n');
  } finally {
    await stopService(again);
  }
});

for (const inFlight of [true, false]) {
  test(`SIGTERM during a slow Job leaves no process behind (${inFlight ? 'a request in flight: the forced exit' : 'no request: the orderly stop'})`, async () => {
    const data = freshData();
    ownWorld(data);
    // Edit sessions off: the Job this is about is the write's own, not an edit Pod started beside it.
    const svc = await startService(data, { FELIS_EMBEDDED_JOB_DELAY_MS: '30000', FELIS_SHUTDOWN_SECONDS: '2', FELIS_EDIT_SESSIONS: 'off' });
    const body = { ...writeBody('new\n') };
    const pending = inFlight ? svc.call('PUT', '/api/v1/servers/survival/file?path=target.txt', body).catch(() => undefined) : undefined;
    if (!inFlight) {
      // A Job of someone else's (a backup, say) that the service is running but nobody waits on.
      await svc.kube.batch.createNamespacedJob({
        namespace: 'minecraft',
        body: {
          metadata: { name: 'slow-backup' },
          spec: {
            backoffLimit: 0,
            template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'x', command: ['sh', '-c', 'sleep 30; echo done', 'felis-delayed'] }] } },
          },
        },
      });
    }
    const procs = await until('the write Job to be running', () => {
      const ps = delayedJobProcesses(data);
      return ps.length ? ps : undefined;
    });
    seen.push(...procs);
    const stoppedAt = Date.now();
    killGroup(svc.proc.pid!, 'SIGTERM');
    const code = await svc.exited;
    await pending;
    assert.ok(Date.now() - stoppedAt < 8000, 'the stop is bounded');
    assert.equal(code, inFlight ? 1 : 0, svc.output());
    for (const p of procs) {
      assert.ok(!alive(p), `Job process ${p.pid} ended with the service`);
      assert.deepEqual(groupMembers(p.pid), [], `nothing of process group ${p.pid} is left`);
    }
  });
}

test('the ops listing after a restart (SIGTERM, then SIGKILL) is the listing before it: a success stays a success, a refusal keeps its code and conflicts', async () => {
  const data = freshData();
  let svc = await startService(data);
  try {
    const listing = async (s: Service) => {
      const r = await s.call('GET', '/api/v1/servers/survival/files/ops');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.ops as { id: string; state: string; error?: { code: string; conflicts?: string[] } }[];
    };
    const ended = (s: Service, id: string) => until(`op ${id} to end`, async () => (await listing(s)).find((o) => o.id === id && o.state !== 'running'), 60_000);
    const zip = await svc.call('POST', '/api/v1/servers/survival/files/zip?path=world', { name: 'world.zip' });
    assert.equal(zip.status, 202, JSON.stringify(zip.body));
    assert.equal((await ended(svc, zip.body.op.id)).state, 'succeeded');
    // Unpacking it next to itself without overwrite: every file it holds exists already.
    const unzip = await svc.call('POST', '/api/v1/servers/survival/files/unzip?path=world.zip', { overwrite: false });
    assert.equal(unzip.status, 202, JSON.stringify(unzip.body));
    const refused = await ended(svc, unzip.body.op.id);
    assert.equal(refused.state, 'failed');
    assert.equal(refused.error?.code, 'file_exists');
    assert.ok(refused.error?.conflicts?.includes('world/level.dat'), JSON.stringify(refused.error));
    const before = await listing(svc);
    assert.equal(before.length, 2);

    await stopService(svc);
    svc = await startService(data);
    assert.deepEqual(await listing(svc), before, 'after an orderly stop');

    killGroup(svc.proc.pid!);
    await svc.exited;
    svc = await startService(data);
    assert.deepEqual(await listing(svc), before, 'after a SIGKILL of the service');
  } finally {
    await stopService(svc);
  }
});

test('an orphan that finished its op after a SIGKILL of the service is listed as outcome_unknown (NodeRestarted), never "run it again"', async () => {
  const data = freshData();
  const svc = await startService(data, { FELIS_EMBEDDED_JOB_DELAY_MS: '1500' });
  const zip = await svc.call('POST', '/api/v1/servers/survival/files/zip?path=world', { name: 'orphan.zip' });
  assert.equal(zip.status, 202, JSON.stringify(zip.body));
  const [proc] = await until('the zip Job to be running', () => {
    const ps = delayedJobProcesses(data);
    return ps.length ? ps : undefined;
  });
  seen.push(proc!);
  killGroup(svc.proc.pid!);
  await svc.exited;
  // The Job's process outlives the service and does its work; only its report has nowhere to go.
  await until('the orphan to finish', () => !alive(proc!) || undefined, 30_000);
  assert.ok(statSync(join(data, 'worlds', 'survival', 'orphan.zip')).size > 0, 'the orphan packed the archive');

  const again = await startService(data);
  try {
    const op = await until(
      'the op to be settled',
      async () => {
        const r = await again.call('GET', '/api/v1/servers/survival/files/ops');
        return (r.body.ops as { id: string; state: string; error?: { code: string; message: string } }[]).find((o) => o.id === zip.body.op.id && o.state !== 'running');
      },
      30_000,
    );
    assert.equal(op.state, 'failed');
    assert.deepEqual(op.error, {
      code: 'outcome_unknown',
      message: 'the service or its node restarted while the file operation ran (NodeRestarted); the outcome is unknown: check the files before running it again',
    });
  } finally {
    await stopService(again);
  }
});

// Last of the hooks (they run in order): the processes above are stopped even when this throws.
after(() => checked.assertClean());

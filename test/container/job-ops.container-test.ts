/**
 * The Job program from the image, in real containers: a stack whose kubelet runs every file Job's
 * Pod with podman (test/container/podman.ts), from the Pod spec the functions render — its
 * securityContext (root with only the Job's capabilities, or uid 1000 with none), read-only root,
 * no privilege escalation, its CPU and memory limits (256 MiB), the world claim's folder at the
 * Job's mount path (read-only where the Job reads only), emptyDir scratch as a node folder. The
 * functions read each result line from `pods/log`, as in production; browse and edit sessions serve
 * from containers too. Then: a 1,000,000-entry zip extracts within the 256 MiB limit (no OOM kill;
 * the resident peak sampled from the container's cgroup), and an op given less memory than Node
 * needs is killed by the kernel, which the ops listing reports as `OOMKilled`.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { smallEntriesZip } from '../../bench/zip-fixtures.ts';
import { waitOp } from '../support/ops.ts';
import { q, type Stack, startStack } from '../support/stack.ts';
import { type ContainerRun, cgroupsAvailable, containerProgram, runs } from './podman.ts';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const MiB = 1024 * 1024;

/** The op mode of a container run, from its command line (`files --op X`, a serving mode, or `export`). */
function modeOf(r: ContainerRun): string {
  const a = r.args;
  const op = a.indexOf('--op');
  if (op >= 0) return a[op + 1]!;
  if (r.command.includes('export')) return 'export';
  if (a.includes('--edit')) return 'edit';
  if (a.includes('--serve')) return 'browse';
  if (a.includes('--receive')) return 'receive';
  return a.join(' ');
}

async function settled(): Promise<void> {
  await Promise.all(runs.map((r) => r.done));
}

const modesOf = (rs: ContainerRun[]) => rs.map(modeOf);

/** Every run wrote nothing into the image's root, under the limit the manifests give its kind of Job. */
function checkRuns(rs: ContainerRun[]): void {
  for (const r of rs) {
    assert.deepEqual(r.diff, [], `${r.pod} (${modeOf(r)}) wrote nothing into the image's root`);
    assert.equal(r.oomKills, 0, `${r.pod} (${modeOf(r)})`);
    if (r.limitBytes !== undefined) assert.ok(r.peakRssBytes < r.limitBytes, `${r.pod} (${modeOf(r)}): ${r.peakRssBytes} resident of ${r.limitBytes}`);
  }
}

describe('the Job program in containers, driven by the functions', () => {
  let s: Stack;
  after(async () => {
    await s?.close();
    await settled();
  });

  test('every one-shot op mode runs from the image and the function reads its result line', { timeout: 600_000 }, async () => {
    assert.ok(cgroupsAvailable(), 'the cgroup v1 memory controller is mounted at /sys/fs/cgroup/memory');
    // No job key, so no browse or edit sessions: every list, read and change is a Job of its own.
    s = await startStack({ editor: { timeoutMs: 120_000 } });
    s.program = containerProgram();
    const first = runs.length;
    mkdirSync(join(s.world, 'ct'), { recursive: true });
    writeFileSync(join(s.world, 'ct', 'server.properties'), 'motd=hi\n');

    const list = await s.call('GET', `/api/v1/servers/survival/files?path=ct`);
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.body.entries.map((e: { name: string }) => e.name),
      ['server.properties'],
    );

    const read = await s.call('GET', `/api/v1/servers/survival/file?path=${q('ct/server.properties')}`);
    assert.equal(read.status, 200, read.text);
    assert.equal(Buffer.from(read.body.content, 'base64').toString(), 'motd=hi\n');

    const text = 'motd=container\n';
    const write = await s.call('PUT', `/api/v1/servers/survival/file?path=${q('ct/server.properties')}`, { content: Buffer.from(text).toString('base64'), content_sha256: sha(text) });
    assert.equal(write.status, 200, write.text);
    assert.equal(readFileSync(join(s.world, 'ct', 'server.properties'), 'utf8'), text);

    const mkdir = await s.call('POST', `/api/v1/servers/survival/files/mkdir?path=${q('made')}`);
    assert.ok([200, 201].includes(mkdir.status), mkdir.text);
    assert.ok(statSync(join(s.world, 'made')).isDirectory());

    const rename = await s.call('POST', `/api/v1/servers/survival/files/rename?path=${q('ct/server.properties')}`, { to: 'ct/server.old' });
    assert.equal(rename.status, 200, rename.text);
    assert.ok(existsSync(join(s.world, 'ct', 'server.old')));

    const zip = await s.call('POST', `/api/v1/servers/survival/files/zip?path=ct`, { name: 'ct.zip' });
    assert.equal(zip.status, 202, zip.text);
    const zipped = await waitOp(s, zip.body.op.id, undefined, 120_000);
    assert.equal(zipped.state, 'succeeded', JSON.stringify(zipped));

    mkdirSync(join(s.world, 'unpacked'));
    const unzip = await s.call('POST', `/api/v1/servers/survival/files/unzip?path=${q('ct.zip')}`, { to: 'unpacked', overwrite: false });
    assert.equal(unzip.status, 202, unzip.text);
    const unzipped = await waitOp(s, unzip.body.op.id, undefined, 120_000);
    assert.equal(unzipped.state, 'succeeded', JSON.stringify(unzipped));
    assert.equal(readFileSync(join(s.world, 'unpacked', 'ct', 'server.old'), 'utf8'), text);

    const del = await s.call('DELETE', `/api/v1/servers/survival/file?path=${q('ct/server.old')}`);
    assert.equal(del.status, 200, del.text);
    assert.ok(!existsSync(join(s.world, 'ct', 'server.old')));

    await settled();
    const mine = runs.slice(first);
    const modes = new Set(modesOf(mine));
    for (const m of ['list', 'read', 'write', 'mkdir', 'rename', 'zip', 'unzip', 'delete']) assert.ok(modes.has(m), `${m} ran in a container (ran: ${[...modes].join(', ')})`);
    for (const r of mine) assert.equal(r.limitBytes, 256 * MiB, `${r.pod} (${modeOf(r)}): the Job's memory limit`);
    checkRuns(mine);
  });

  test("the serving modes run from the image: an upload's receiver, a download's export, browse and edit sessions", { timeout: 600_000 }, async () => {
    await s?.close();
    s = await startStack({ browse: { idleSeconds: 5, startBudgetMs: 0 }, downloads: {}, uploads: { idleSeconds: 20, lifetimeSeconds: 600 }, editor: { timeoutMs: 120_000 } });
    s.program = containerProgram();
    const first = runs.length;
    // An upload: the receiver Job's Pod, called on its address (loopback, the Pod's own).
    const up = 'uploaded through a container\n';
    const upload = await s.call('PUT', `/api/v1/servers/survival/files/upload?path=${q('plugins/up.txt')}&overwrite=true`, up, {
      'content-type': 'application/octet-stream',
      'content-digest': `sha-256=:${createHash('sha256').update(up).digest('base64')}:`,
    });
    assert.ok([200, 201].includes(upload.status), upload.text);
    assert.equal(readFileSync(join(s.world, 'plugins', 'up.txt'), 'utf8'), up);

    // A download: signed, then the export Job's Pod streams the file.
    const signed = await s.call('POST', `/api/v1/servers/survival/files/download?path=${q('plugins/up.txt')}`);
    assert.equal(signed.status, 200, signed.text);
    const got = await fetch(new URL(signed.body.url, s.url));
    assert.equal(got.status, 200);
    assert.equal(await got.text(), up);
    // The export Job holds the world until it has ended; the edits below wait for that (signing
    // already started the browse session, so nothing else here takes that long any more).
    for (const end = Date.now() + 120_000; (await s.call('GET', '/api/v1/servers/survival/holder')).body.held !== false; ) {
      assert.ok(Date.now() < end, 'the export Job still holds the world');
      await new Promise((r) => setTimeout(r, 200));
    }

    const running = (mode: string) => runs.slice(first).some((r) => modeOf(r) === mode && r.exitCode === undefined);
    const deadline = Date.now() + 120_000;
    // The first listing starts a session beside its one-shot Job; once the session is up, it answers.
    while (!running('browse')) {
      assert.ok(Date.now() < deadline, `a browse Pod in a container: ${modesOf(runs.slice(first)).join(', ')}`);
      assert.equal((await s.call('GET', '/api/v1/servers/survival/files')).status, 200);
      await new Promise((r) => setTimeout(r, 200));
    }
    const lists = modesOf(runs).filter((m) => m === 'list').length;
    const viaSession = await s.call('GET', '/api/v1/servers/survival/files?path=plugins');
    assert.equal(viaSession.status, 200, viaSession.text);
    assert.ok(
      viaSession.body.entries.some((e: { name: string }) => e.name === 'README.txt'),
      viaSession.text,
    );
    assert.equal(modesOf(runs).filter((m) => m === 'list').length, lists, "the listing was the browse Pod's: no Job of its own");

    const save = (n: number) => {
      const t = `motd=edit ${n}\n`;
      return s.call('PUT', `/api/v1/servers/survival/file?path=${q('motd.txt')}`, { content: Buffer.from(t).toString('base64'), content_sha256: sha(t) });
    };
    let n = 0;
    while (!running('edit')) {
      assert.ok(Date.now() < deadline, `an edit Pod in a container: ${modesOf(runs.slice(first)).join(', ')}`);
      const saved = await save(n++);
      assert.equal(saved.status, 200, saved.text);
      await new Promise((r) => setTimeout(r, 200));
    }
    const writes = modesOf(runs).filter((m) => m === 'write').length;
    const warm = await save(n);
    assert.equal(warm.status, 200, warm.text);
    assert.equal(readFileSync(join(s.world, 'motd.txt'), 'utf8'), `motd=edit ${n}\n`);
    assert.equal(modesOf(runs).filter((m) => m === 'write').length, writes, "the change was the edit Pod's: no Job of its own");

    await s.close();
    await settled();
    const mine = runs.slice(first);
    const modes = new Set(modesOf(mine));
    for (const m of ['receive', 'export', 'browse', 'edit']) assert.ok(modes.has(m), `${m} ran in a container (ran: ${[...modes].join(', ')})`);
    checkRuns(mine);
  });
});

describe('memory limits, enforced by the kernel', () => {
  let s: Stack;
  after(async () => {
    await s?.close();
    await settled();
  });

  test("a 1,000,000-entry zip extracts within the Job's 256 MiB (no OOM kill; its resident peak from its cgroup)", { timeout: 1_800_000 }, async () => {
    s = await startStack({ editor: { timeoutMs: 120_000 } });
    s.program = containerProgram();
    mkdirSync(join(s.world, 'million'));
    const zip = join(s.world, 'million.zip');
    smallEntriesZip(zip, 1_000_000);
    const before = runs.length;
    const r = await s.call('POST', `/api/v1/servers/survival/files/unzip?path=${q('million.zip')}`, { to: 'million', overwrite: false });
    assert.equal(r.status, 202, r.text);
    const op = await waitOp(s, r.body.op.id, undefined, 1_500_000);
    assert.equal(op.state, 'succeeded', JSON.stringify(op));
    await settled();
    const run = runs.slice(before).find((x) => modeOf(x) === 'unzip');
    assert.ok(run, 'the extraction ran in a container');
    assert.equal(run.limitBytes, 256 * MiB);
    assert.equal(run.oomKills, 0, 'no OOM kill');
    assert.ok(run.peakRssBytes > 0 && run.peakRssBytes < 256 * MiB, `resident peak ${run.peakRssBytes}`);
    assert.equal(readFileSync(join(s.world, 'million', 'd999', 'f999999.txt'), 'utf8'), 'entry 999999 '.repeat(8));
    // The cgroup's usage counts the page cache of a million new files too, which the kernel reclaims at the limit.
    console.log(
      `# container_unzip_1m_entries resident peak ${(run.peakRssBytes / MiB).toFixed(1)} MiB; cgroup usage peak ${(run.peakBytes / MiB).toFixed(1)} MiB (page cache included) of ${(run.limitBytes! / MiB).toFixed(0)} MiB; oom kills ${run.oomKills}`,
    );
  });

  test('an op given less memory than Node needs is killed by the kernel, and the ops listing says OOMKilled', { timeout: 300_000 }, async () => {
    await s?.close();
    // 8 MiB: less than Node itself needs to start (12 MiB here), whatever the op.
    s = await startStack({ editor: { memory: '8Mi', timeoutMs: 60_000 } });
    s.program = containerProgram();
    const before = runs.length;
    const r = await s.call('POST', `/api/v1/servers/survival/files/zip?path=plugins`, { name: 'p.zip' });
    assert.equal(r.status, 202, r.text);
    const op = await waitOp(s, r.body.op.id, undefined, 120_000);
    await settled();
    const run = runs.slice(before).find((x) => modeOf(x) === 'zip');
    assert.ok(run, 'the zip ran in a container');
    assert.equal(run.exitCode, 137, 'SIGKILL');
    assert.ok(run.oomKills > 0, `the container's cgroup counted the kernel's kill (oom_kill ${run.oomKills}, limit ${run.limitBytes})`);
    assert.equal(op.state, 'failed', JSON.stringify(op));
    assert.match(JSON.stringify(op), /OOMKilled/);
  });
});

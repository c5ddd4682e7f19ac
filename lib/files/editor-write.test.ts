import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { runCli } from '../../job/cli.ts';
import type { WriteReceiving } from '../../job/serve/receive-write.ts';
import { makeWorld, snapshot } from '../../job/testing/world.ts';
import { withEvent } from '../events/scope.ts';
import { mapDomainError } from '../http/error-map.ts';
import type { JobPodApi, LogOpening } from '../kube/job-pods.ts';
import { FILES_CONTAINER } from '../labels.ts';
import { JobLostError, RunnerError } from '../runner/errors.ts';
import { SyncRunner } from '../runner/sync-runner.ts';
import { editorConfig, TARGET as T } from './editor.test-kit.ts';
import { FilesEditor } from './editor.ts';
import { FileEditError, WriteNotDeliveredError } from './errors.ts';

const KEY = Buffer.alloc(32, 4);
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const CFG = editorConfig({ asyncDeadlineSeconds: 7200, asyncTtlSeconds: 1800 });

/**
 * A cluster of one: a created Job runs the real Job program in this process over `root`, its Pod
 * on 127.0.0.1 (the port its receiver picked), its log the program's stdout.
 */
function cluster(root: string, o: { pod?: 'never' | 'fails'; digest?: string; deferStart?: boolean } = {}) {
  const jobs: V1Job[] = [];
  let receiving: WriteReceiving | undefined;
  let exit: number | undefined;
  let started = false;
  // The program's stdout, replayed to every log opening (a lost caller's opening is closed).
  const printed: string[] = [];
  const readers = new Set<PassThrough>();
  const launch = (job: V1Job) => {
    started = true;
    const c = job.spec!.template.spec!.containers[0]!;
    const env: Record<string, string> = { FELIS_POD_IP: '127.0.0.1' };
    for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
    env.FELIS_SERVE_PORT = '0';
    if (o.digest) env.FELIS_SERVE_TOKEN_SHA256 = o.digest;
    const args = c.args!.map((a) => (a === '/data' ? root : a));
    void runCli(['files', ...args], env, { stdout: (t) => void (printed.push(t), readers.forEach((r) => void r.write(t))), stderr: () => {} }, { onWriteReceiving: (r) => (receiving = r) }).then(
      (code) => {
        exit = code;
        for (const r of readers) r.end();
      },
    );
  };
  const api: JobPodApi = {
    async createJob(_ns, job) {
      jobs.push(job);
      if (!o.pod && !o.deferStart) launch(job);
      return job;
    },
    async listJobs() {
      return jobs.map((j) => ({ ...j, status: exit === undefined ? {} : { conditions: [{ type: exit === 0 ? 'Complete' : 'Failed', status: 'True' }] } }) as V1Job);
    },
    async listPods() {
      if (jobs.length === 0) return [];
      if (o.pod === 'fails') {
        return [{ metadata: { name: 'p' }, status: { phase: 'Failed', containerStatuses: [{ name: FILES_CONTAINER, state: { terminated: { exitCode: 1 } } }] } } as unknown as V1Pod];
      }
      if (o.pod === 'never' || !started) return [{ metadata: { name: 'p' }, spec: { nodeName: 'n' }, status: { phase: 'Pending' } } as unknown as V1Pod];
      // Callable once its program listens, as a kubelet reports a started container.
      if (!receiving && exit === undefined) return [{ metadata: { name: 'p' }, spec: { nodeName: 'n' }, status: { phase: 'Pending' } } as unknown as V1Pod];
      const state = exit === undefined ? { running: {} } : { terminated: { exitCode: exit } };
      return [
        {
          metadata: { name: 'p' },
          spec: { nodeName: 'n' },
          status: { phase: exit === undefined ? 'Running' : exit === 0 ? 'Succeeded' : 'Failed', podIP: '127.0.0.1', containerStatuses: [{ name: FILES_CONTAINER, state }] },
        } as unknown as V1Pod,
      ];
    },
    async openLog(): Promise<LogOpening> {
      if (o.pod === 'fails') return { kind: 'stream', body: (async function* () {})(), close: () => {} };
      const r = new PassThrough();
      for (const t of printed) r.write(t);
      if (exit !== undefined) r.end();
      else readers.add(r);
      return { kind: 'stream', body: r, close: () => (readers.delete(r), r.destroy()) };
    },
  };
  return { api, jobs, port: () => receiving?.address.port ?? 1, start: () => launch(jobs[0]!) };
}

function editor(c: ReturnType<typeof cluster>, streamed = true) {
  return new FilesEditor(CFG, new SyncRunner(c.api, { finishGraceMs: 200 }), c.api, streamed ? { keyFile: '/nonexistent', key: KEY, pods: c.api, port: c.port } : undefined);
}

test('with a job key the content reaches the Job over HTTP and is written; the Job spec holds neither it nor its base64', async () => {
  const w = makeWorld();
  const c = cluster(w.root);
  const content = Buffer.from('streamedContentProbe0123456789');
  const got = await editor(c).write(T, 'notes.txt', content, { sha256: sha(content) });
  assert.equal(got, sha(content));
  assert.deepEqual(fs.readFileSync(w.p('notes.txt')), content);
  assert.equal(c.jobs.length, 1);
  const spec = JSON.stringify(c.jobs[0]);
  assert.ok(!spec.includes(content.toString()) && !spec.includes(content.toString('base64')));
  assert.ok(!spec.includes('FELIS_FILE_CONTENT'));
  assert.equal(c.jobs[0]!.metadata!.labels!['felis.lolicon.best/files-mode'], 'write');
});

test("the Job's refusals come back through its result line as before: file_changed, file_exists, the withheld file", async () => {
  const w = makeWorld();
  const content = Buffer.from('x: 1\n');
  for (const [path, opts, kind] of [
    ['config/paper.yml', { expectSha256: sha('not it') }, 'conflict'],
    ['server.properties', { createOnly: true }, 'exists'],
    ['config/paper-global.yml', { createOnly: true }, 'bad_path'],
  ] as const) {
    const before = snapshot(w.root);
    const err = await editor(cluster(w.root))
      .write(T, path, content, { sha256: sha(content), ...opts })
      .catch((e: unknown) => e);
    assert.ok(err instanceof FileEditError && err.kind === kind, `${path}: ${String(err)}`);
    assert.deepEqual(snapshot(w.root), before);
  }
});

test('a Pod that never becomes callable: 504 write_not_delivered at the deadline, nothing written', async () => {
  const w = makeWorld();
  const before = snapshot(w.root);
  const c = cluster(w.root, { pod: 'never' });
  const t0 = performance.now();
  const err = await editor(c)
    .write(T, 'never.txt', Buffer.from('x'), { sha256: sha('x') })
    .catch((e: unknown) => e);
  assert.ok(err instanceof WriteNotDeliveredError, String(err));
  assert.ok(performance.now() - t0 >= 2_900, 'it waited for the whole deadline');
  assert.deepEqual(mapDomainError(err), { status: 504, code: 'write_not_delivered', message: "the write's file Job could not take its content in time; nothing was written, retry shortly" });
  assert.deepEqual(snapshot(w.root), before);
});

test('a Pod that ends before it has the content is a plain retry; one that refuses the token is an error, and nothing is written', async () => {
  const w = makeWorld();
  const before = snapshot(w.root);
  const lost = await editor(cluster(w.root, { pod: 'fails' }))
    .write(T, 'a.txt', Buffer.from('x'), { sha256: sha('x') })
    .catch((e: unknown) => e);
  assert.ok(lost instanceof JobLostError, String(lost));
  assert.equal(lost.callerMessage, 'the file operation ended without a result; retry it');
  const refused = await editor(cluster(w.root, { digest: 'f'.repeat(64) }))
    .write(T, 'b.txt', Buffer.from('x'), { sha256: sha('x') })
    .catch((e: unknown) => e);
  assert.ok(refused instanceof RunnerError && /refused its content: 401/.test(refused.message), String(refused));
  assert.deepEqual(snapshot(w.root), before);
});

test('without a job key the content rides in the env, as Felis carries it', async () => {
  const w = makeWorld();
  const c = cluster(w.root, { pod: 'never' });
  const content = Buffer.from('envContentProbe');
  await editor(c, false)
    .write(T, 'e.txt', content, { sha256: sha(content) })
    .catch(() => {});
  const env = c.jobs[0]!.spec!.template.spec!.containers[0]!.env!;
  assert.deepEqual(env[0], { name: 'FELIS_FILE_CONTENT_PARTS', value: '1' });
  assert.equal(env[1]!.value, content.toString('base64'));
  assert.ok(!c.jobs[0]!.spec!.template.spec!.containers[0]!.args!.includes('--receive'));
});

test('a redelivered write event whose first delivery never got its content to the Job delivers it to that Job, and creates no other', async () => {
  const w = makeWorld();
  const c = cluster(w.root, { deferStart: true });
  const content = Buffer.from('redeliveredContent');
  const key = 'e'.repeat(48);
  const first = await withEvent(key, () => editor(c).write(T, 'event.txt', content, { sha256: sha(content) })).catch((e: unknown) => e);
  assert.ok(first instanceof WriteNotDeliveredError, String(first));
  assert.equal(fs.existsSync(w.p('event.txt')), false);
  assert.equal(c.jobs[0]!.metadata!.labels!['felis.lolicon.best/event'], key);
  // The Job's Pod comes up late; the event is delivered again, with the same content.
  c.start();
  const again = await withEvent(key, () => editor(c).write(T, 'event.txt', content, { sha256: sha(content) }));
  assert.equal(again, sha(content));
  assert.deepEqual(fs.readFileSync(w.p('event.txt')), content);
  assert.equal(c.jobs.length, 1, 'the earlier Job was followed, not a new one created');
});

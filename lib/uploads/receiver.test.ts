import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { test } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
import { openContext } from '../../job/op-kit/context.ts';
import { type Receiving, startReceiving } from '../../job/serve/receive.ts';
import { makeWorld, tree } from '../../job/testing/world.ts';
import { landUpload } from '../../job/upload/land.ts';
import { DomainError } from '../errors.ts';
import { FileEditError } from '../files/errors.ts';
import { mapDomainError } from '../http/error-map.ts';
import { LABEL_FILES_RECEIVE } from '../job-spec/upload-job.ts';
import { FILES_CONTAINER } from '../labels.ts';
import { FilesTimeoutError } from '../runner/errors.ts';
import { type ReceiverApi, UploadReceivers } from './receiver.ts';

const KEY = Buffer.alloc(32, 3);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const SETTINGS = { namespace: 'minecraft', image: 'img', command: ['felis', 'files'], serviceAccount: 'sa', worldsRoot: '/data', deadlineSeconds: 120, ttlSeconds: 120 };
const T = { server: 'survival', world: { claim: 'world-survival-0' } };

/** A cluster of one: creating the Job starts its receiver in this process, on 127.0.0.1. */
function fakeCluster(root: string, o: { never?: boolean } = {}) {
  const jobs: V1Job[] = [];
  let r: Receiving | undefined;
  // The Job controller's part: a Job is marked finished once its receiver has stopped.
  let ended = false;
  let jobLists = 0;
  const api: ReceiverApi = {
    async createJob(_ns, job) {
      jobs.push(job);
      if (o.never) return job;
      const env = Object.fromEntries(job.spec!.template.spec!.containers[0]!.env!.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
      r = await startReceiving({
        host: '127.0.0.1',
        port: 0,
        tokenSha256: env.FELIS_SERVE_TOKEN_SHA256!,
        idleMs: 1_000,
        lifetimeMs: 5_000,
        once: env.FELIS_RECEIVE_ONCE === 'true',
        land: async (req, body) => {
          const ctx = openContext(root);
          try {
            return await landUpload(ctx, req, body);
          } finally {
            ctx.root.close();
          }
        },
      });
      void r.stopped.then(() => setTimeout(() => (ended = true), 150));
      return job;
    },
    async listJobs() {
      jobLists++;
      return jobs.map((j) => ({ ...j, status: ended ? { conditions: [{ type: 'Complete', status: 'True' }] } : {} }) as V1Job);
    },
    async listPods() {
      if (!r) return [];
      return [{ metadata: { name: 'p' }, status: { phase: 'Running', podIP: '127.0.0.1', containerStatuses: [{ name: FILES_CONTAINER, state: { running: {} } }] } } as unknown as V1Pod];
    },
  };
  return { api, jobs, port: () => r?.address.port ?? 0, stopped: () => r?.stopped, ended: () => ended, jobLists: () => jobLists };
}

function streamOf(chunks: Buffer[], breakAfter?: number): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    async pull(c) {
      if (breakAfter !== undefined && i === breakAfter) return c.error(new Error('client went away'));
      if (i >= chunks.length) return c.close();
      c.enqueue(chunks[i++]!);
      await new Promise((r) => setTimeout(r, 5));
    },
  });
}

test('a single upload creates one receiver Job that holds the world, and lands the streamed body', async () => {
  const w = makeWorld();
  const c = fakeCluster(w.root);
  const data = Buffer.alloc(2 << 20, 7);
  const u = new UploadReceivers(c.api, SETTINGS, { keyFile: '/nonexistent', startTimeoutMs: 2_000 }, { key: KEY, newId: () => '0123456789abcdef', port: c.port });
  const out = await u.single(
    T,
    { path: 'big.bin', size: data.length, sha256: sha(data), overwrite: false },
    streamOf([data.subarray(0, 1 << 20), data.subarray(1 << 20)]),
    new AbortController().signal,
  );
  assert.deepEqual(out, { sha256: sha(data) });
  // It answers only once the receiver Job is marked finished: the world is free when the caller hears.
  assert.equal(c.ended(), true);
  assert.ok(c.jobLists() >= 1);
  assert.deepEqual(fs.readFileSync(w.p('big.bin')), data);
  assert.equal(c.jobs.length, 1);
  const labels = c.jobs[0]!.metadata!.labels!;
  assert.equal(labels['app.kubernetes.io/managed-by'], 'felis-files');
  assert.equal(labels['felis.lolicon.best/files-mode'], 'upload', 'a write mode: it holds the world');
  assert.equal(labels[LABEL_FILES_RECEIVE], 'true');
  assert.equal(c.jobs[0]!.metadata!.name, 'files-survival-u123456789abcdef');
  const env = c.jobs[0]!.spec!.template.spec!.containers[0]!.env!;
  assert.match(env.find((e) => e.name === 'FELIS_SERVE_TOKEN_SHA256')!.value!, /^[0-9a-f]{64}$/, 'only the token digest is in the spec');
  assert.equal(c.jobs[0]!.spec!.template.spec!.volumes![0]!.persistentVolumeClaim!.readOnly, false);
  assert.equal((await c.stopped())!.reason, 'done', 'the single receiver ended after its upload');
});

test('a body that lies or breaks off changes nothing and leaves no working file', async () => {
  const w = makeWorld();
  const data = Buffer.from('0123456789');
  const other = Buffer.from('abcdefghij');
  for (const [body, code] of [
    [streamOf([other]), 'digest_mismatch'],
    [streamOf([data.subarray(0, 4)]), 'upload_incomplete'],
    [streamOf([data, Buffer.from('x')]), 'too_large'],
    [streamOf([data.subarray(0, 4), data.subarray(4)], 1), 'upload_incomplete'],
  ] as const) {
    const c = fakeCluster(w.root);
    const u = new UploadReceivers(c.api, SETTINGS, { keyFile: '/nonexistent', startTimeoutMs: 2_000 }, { key: KEY, port: c.port });
    await assert.rejects(
      u.single(T, { path: 'n.txt', size: data.length, sha256: sha(data), overwrite: false }, body, new AbortController().signal),
      (e: unknown) => e instanceof DomainError && e.code === code,
    );
    const t0 = Date.now();
    await c.stopped();
    assert.ok(Date.now() - t0 < 2_000, `${code}: the receiver ended soon after (${Date.now() - t0} ms)`);
    assert.ok(!fs.existsSync(w.p('n.txt')));
    assert.ok(!tree(w.root).some((p) => p.includes('.felis-edit-')), code);
  }
});

test('an op refusal from the receiver is the file error; a receiver that never comes is files_timeout', async () => {
  const w = makeWorld();
  const c = fakeCluster(w.root);
  const u = new UploadReceivers(c.api, SETTINGS, { keyFile: '/nonexistent', startTimeoutMs: 2_000 }, { key: KEY, port: c.port });
  const data = Buffer.from('x');
  await assert.rejects(
    u.single(T, { path: 'server.properties', size: 1, sha256: sha(data), overwrite: false }, streamOf([data]), new AbortController().signal),
    (e: unknown) => e instanceof FileEditError && e.kind === 'exists',
  );
  const none = fakeCluster(w.root, { never: true });
  const u2 = new UploadReceivers(none.api, SETTINGS, { keyFile: '/nonexistent', startTimeoutMs: 200 }, { key: KEY, port: none.port });
  await assert.rejects(u2.single(T, { path: 'a', size: 1, sha256: sha(data), overwrite: false }, streamOf([data]), new AbortController().signal), FilesTimeoutError);
});

test("a receiver's answers become the caller's: refusals with their code, anything else a 500", async () => {
  const { answerOrThrow } = await import('./sessions.ts');
  assert.deepEqual(answerOrThrow({ status: 200, text: '{"id":"x"}' }, [200]), { id: 'x' });
  assert.throws(
    () => answerOrThrow({ status: 409, text: '{"code":"upload_busy","error":"busy"}' }, [200]),
    (e: unknown) => mapDomainError(e)?.status === 409 && mapDomainError(e)?.code === 'upload_busy',
  );
  assert.throws(
    () => answerOrThrow({ status: 507, text: '{"code":"upload_staging_full","error":"full"}' }, [200]),
    (e: unknown) => mapDomainError(e)?.status === 507,
  );
  assert.throws(
    () => answerOrThrow({ status: 507, text: '' }, [200]),
    (e: unknown) => !(e instanceof DomainError),
  );
  assert.throws(
    () => answerOrThrow({ status: 500, text: '{"code":"internal","error":"x"}' }, [200]),
    (e: unknown) => !(e instanceof DomainError),
  );
  assert.throws(
    () => answerOrThrow({ status: 502, text: 'not json' }, [200]),
    (e: unknown) => !(e instanceof DomainError),
  );
});

test('parents=true rides on the call to the receiver, not in the Job: the Job spec is the one without it, and the folders are made', async () => {
  const data = Buffer.from('key: value\n');
  const specs: string[] = [];
  for (const parents of [false, true]) {
    const w = makeWorld();
    const c = fakeCluster(w.root);
    const u = new UploadReceivers(c.api, SETTINGS, { keyFile: '/nonexistent', startTimeoutMs: 2_000 }, { key: KEY, newId: () => '0123456789abcdef', port: c.port });
    const go = u.single(T, { path: 'plugins/New/config.yml', size: data.length, sha256: sha(data), overwrite: false, ...(parents ? { parents } : {}) }, streamOf([data]), new AbortController().signal);
    if (parents) {
      assert.deepEqual(await go, { sha256: sha(data) });
      assert.deepEqual(fs.readFileSync(w.p('plugins/New/config.yml')), data);
    } else {
      await assert.rejects(go, (e: unknown) => e instanceof FileEditError && e.kind === 'not_found');
      assert.equal(fs.existsSync(w.p('plugins')), false);
    }
    specs.push(JSON.stringify(c.jobs[0]!.spec!.template.spec!.containers[0]));
  }
  assert.equal(specs[1], specs[0], "the receiver Job's command line and environment do not change");
});

test("a signed URL's use: the Job named from the ticket, kept past its expiry; a second create of that name is upload_url_used, not a 500", async () => {
  const w = makeWorld();
  const c = fakeCluster(w.root);
  const u = new UploadReceivers(c.api, SETTINGS, { keyFile: '/nonexistent', startTimeoutMs: 2_000 }, { key: KEY, port: c.port });
  const claim = { opId: 'u0123456789abcde', keepSeconds: 660 };
  const data = Buffer.from('no digest sent\n');
  const out = await u.single(T, { path: 'signed.txt', size: data.length, overwrite: false }, streamOf([data]), new AbortController().signal, claim);
  // No digest sent: the receiver computed it.
  assert.deepEqual(out, { sha256: sha(data) });
  assert.equal(c.jobs[0]!.metadata!.name, 'files-survival-u0123456789abcde');
  assert.equal(c.jobs[0]!.spec!.ttlSecondsAfterFinished, 660, 'kept until the ticket has expired, past the settings TTL of 120 s');
  // The API server refuses a second Job of that name.
  const exists = new ApiException(409, 'Conflict', JSON.stringify({ kind: 'Status', reason: 'AlreadyExists', code: 409 }), {});
  const again = new UploadReceivers({ ...c.api, createJob: async () => Promise.reject(exists) }, SETTINGS, { keyFile: '/nonexistent', startTimeoutMs: 2_000 }, { key: KEY, port: c.port });
  await assert.rejects(
    again.single(T, { path: 'signed.txt', size: 1, overwrite: true }, streamOf([Buffer.from('x')]), new AbortController().signal, claim),
    (e: DomainError) => e.code === 'upload_url_used',
  );
  // Without a claim the same refusal is no spent URL: the create failed (a 500).
  await assert.rejects(again.single(T, { path: 'signed.txt', size: 1, overwrite: true }, streamOf([Buffer.from('x')]), new AbortController().signal), (e: Error) => !(e instanceof DomainError));
  assert.equal(fs.readFileSync(w.p('signed.txt'), 'utf8'), 'no digest sent\n');
});

test('a form through the receiver: its parts placed, and a refusal mid-way answered with what was placed before it', async () => {
  const w = makeWorld();
  const claim = { opId: 'u00000000000000f', keepSeconds: 660 };
  const fd = new FormData();
  fd.append('files', new Blob(['one']), 'one.txt');
  fd.append('files', new Blob(['clobber']), 'paper.yml');
  const req = new Request('http://x/', { method: 'POST', body: fd });
  const body = Buffer.from(await req.arrayBuffer());
  const c = fakeCluster(w.root);
  const u = new UploadReceivers(c.api, SETTINGS, { keyFile: '/nonexistent', startTimeoutMs: 2_000 }, { key: KEY, port: c.port });
  const out = await u.form(T, { path: 'config', size: body.length, contentType: req.headers.get('content-type')!, overwrite: false }, streamOf([body]), new AbortController().signal, claim);
  assert.deepEqual(out.files, [{ path: 'config/one.txt', sha256: sha(Buffer.from('one')), size: 3 }]);
  assert.ok(out.refusal instanceof FileEditError);
  assert.equal(mapDomainError(out.refusal!)?.code, 'file_exists');
  assert.match(out.refusal.message, /placed before it, and kept: config\/one\.txt/);
  assert.equal(fs.readFileSync(w.p('config/paper.yml'), 'utf8'), 'paper: true\n');
});

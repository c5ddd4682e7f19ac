/**
 * Where a write's bytes travel, end to end through the real client-node. With a job key (as
 * `npm start` and every deployment with the job-key Secret have) the function streams the content to
 * its Job's Pod with the Job's token, so no Job or Pod object holds it: every Job and Pod in the
 * namespace, as a namespace reader lists them, is scanned for the bytes and their base64. Without a
 * key the Felis-compatible env-var path carries it in the Pod spec, and the same scan finds it (so
 * the scan can fail). A body cut off on its way to the Pod writes nothing.
 */

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BatchV1Api, CoreV1Api, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { callableAddress } from '../lib/kube/job-facts.ts';
import { FILES_CONTAINER, LABEL_FILES_MODE, LABEL_FILES_OP, LABEL_SERVER } from '../lib/labels.ts';
import { jobToken } from '../lib/protocol/job-token.ts';
import { isEditName } from '../lib/protocol/working-names.ts';
import { q, REAL, type Stack, startStack, tierMs, until } from './support/stack.ts';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const NS = 'minecraft';

/** Distinctive bytes (letters and digits only, so JSON cannot escape them into another spelling). */
function distinctive(): Buffer {
  return Buffer.from(`felisWriteProbe${randomBytes(24).toString('hex')}EndOfProbe`);
}

interface Scan {
  jobs: V1Job[];
  pods: V1Pod[];
  /** Where the content (or its base64) was seen, by object name. */
  hits: string[];
}

async function scan(core: CoreV1Api, batch: BatchV1Api, content: Buffer): Promise<Scan> {
  const jobs = (await batch.listNamespacedJob({ namespace: NS })).items;
  const pods = (await core.listNamespacedPod({ namespace: NS })).items;
  const needles = [content.toString('utf8'), content.toString('base64'), content.toString('base64url'), content.toString('hex')];
  const hits: string[] = [];
  for (const o of [...jobs, ...pods]) {
    const text = JSON.stringify(o);
    for (const n of needles) if (text.includes(n)) hits.push(`${o.kind ?? 'object'} ${o.metadata?.name}`);
  }
  return { jobs, pods, hits };
}

const writeJobs = (jobs: V1Job[]) => jobs.filter((j) => j.metadata?.labels?.[LABEL_FILES_MODE] === 'write' && j.metadata.labels[LABEL_SERVER] === 'survival');

describe('write content with a job key', () => {
  let s: Stack;
  let core: CoreV1Api;
  let batch: BatchV1Api;
  before(async () => {
    // A long TTL, so the write's Job and Pod are still there to be scanned after the answer (the
    // embedded cluster runs TTLs at 1/100).
    // Edit sessions off: these are about a write Job's content delivery.
    s = await startStack({ browse: { edits: false }, editor: { ttlSeconds: REAL ? 60 : 6000 } });
    const kc = s.cluster.kubeConfig(s.cluster.adminToken);
    core = kc.makeApiClient(CoreV1Api);
    batch = kc.makeApiClient(BatchV1Api);
  });
  after(async () => {
    await s?.close();
  });

  test('no Job or Pod object holds the written bytes or their base64; the answer and the file are as before', async () => {
    const content = distinctive();
    const before = writeJobs((await batch.listNamespacedJob({ namespace: NS })).items).length;
    const w = await s.call('PUT', `/api/v1/servers/survival/file?path=${q('config/probe.yml')}`, { content: content.toString('base64'), content_sha256: sha(content) });
    assert.equal(w.status, 200, w.text);
    assert.deepEqual(w.body, { path: 'config/probe.yml', status: 'written', sha256: sha(content) });
    assert.deepEqual(readFileSync(join(s.world, 'config/probe.yml')), content);
    const found = await scan(core, batch, content);
    const mine = writeJobs(found.jobs);
    assert.equal(mine.length, before + 1, 'the write ran as one more write Job, still listed');
    const job = mine.find((j) => !JSON.stringify(j).includes('FELIS_FILE_CONTENT'))!;
    assert.ok(job, 'the write Job carries no content env');
    const opId = job.metadata!.labels![LABEL_FILES_OP]!;
    assert.ok(
      found.pods.some((p) => p.metadata?.labels?.[LABEL_FILES_OP] === opId),
      'its Pod was listed too',
    );
    assert.deepEqual(found.hits, []);
    // The Job holds the world as a write, by Felis's labels, exactly as the env-var Job does.
    assert.equal(job.metadata!.labels!['app.kubernetes.io/managed-by'], 'felis-files');
    assert.notEqual(job.spec!.template.spec!.volumes![0]!.persistentVolumeClaim!.readOnly, true, 'mounted read-write (a real apiserver omits false)');
  });

  test('1 MiB (what a read shows) round-trips: written, then read back with the same SHA-256; 1 MiB + 1 is 413 before any Job', async () => {
    const mib = randomBytes(1 << 20);
    const w = await s.call('PUT', `/api/v1/servers/survival/file?path=${q('config/big.bin')}`, { content: mib.toString('base64'), content_sha256: sha(mib) });
    assert.equal(w.status, 200, w.text);
    assert.equal(w.body.sha256, sha(mib));
    const r = await s.call('GET', `/api/v1/servers/survival/file?path=${q('config/big.bin')}`);
    assert.equal(r.status, 200, r.text.slice(0, 200));
    assert.equal(r.body.sha256, sha(mib));
    assert.equal(sha(Buffer.from(r.body.content, 'base64')), sha(mib));
    const jobs = writeJobs((await batch.listNamespacedJob({ namespace: NS })).items).length;
    const over = randomBytes((1 << 20) + 1);
    const big = await s.call('PUT', `/api/v1/servers/survival/file?path=${q('config/big.bin')}`, { content: over.toString('base64'), content_sha256: sha(over) });
    assert.equal(big.status, 413, big.text);
    assert.deepEqual([big.body.error.code, big.body.error.message], ['too_large', 'content is 1048577 bytes; a write carries at most 1048576 bytes']);
    assert.equal(writeJobs((await batch.listNamespacedJob({ namespace: NS })).items).length, jobs, 'no Job for a refused write');
    assert.equal(sha(readFileSync(join(s.world, 'config/big.bin'))), sha(mib));
  });

  test('the same codes as ever: file_changed, file_exists, the withheld file refuses a condition, bad_path for an escape', async () => {
    const a = distinctive();
    const put = (path: string, c: Buffer, extra: object = {}) => s.call('PUT', `/api/v1/servers/survival/file?path=${q(path)}`, { content: c.toString('base64'), content_sha256: sha(c), ...extra });
    assert.equal((await put('ops.json', Buffer.from('[]'))).status, 200);
    const stale = await put('ops.json', a, { expect_sha256: sha('other') });
    assert.equal(stale.status, 409, stale.text);
    assert.equal(stale.body.error.code, 'file_changed');
    assert.equal(readFileSync(join(s.world, 'ops.json'), 'utf8'), '[]');
    const ok = await put('ops.json', Buffer.from('["x"]'), { expect_sha256: sha('[]') });
    assert.equal(ok.status, 200, ok.text);
    const exists = await put('eula.txt', a, { create_only: true });
    assert.equal(exists.status, 409);
    assert.equal(exists.body.error.code, 'file_exists');
    const withheld = await put('config/paper-global.yml', a, { expect_sha256: sha('guess') });
    assert.equal(withheld.status, 400, withheld.text);
    assert.equal(withheld.body.error.code, 'bad_path');
    const esc = await put('../../x.txt', a);
    assert.equal(esc.status, 400);
    assert.equal(esc.body.error.code, 'bad_path');
    // The withheld file can be overwritten (a new proxy secret), and the new secret is in no object.
    const secret = distinctive();
    const over = await put('config/paper-global.yml', secret);
    assert.equal(over.status, 200, over.text);
    assert.deepEqual((await scan(core, batch, secret)).hits, []);
    assert.deepEqual((await scan(core, batch, a)).hits, []);
  });

  test('a body cut off on its way to the write Pod writes nothing, and the Job ends on its own without holding the world', async () => {
    // The function's side of a write, done by hand and cut short: the Job is the function's own
    // rendering (taken from a write the function ran), with a fresh op id, so only the delivery differs.
    const content = distinctive();
    const w = await s.call('PUT', `/api/v1/servers/survival/file?path=${q('cut-template.txt')}`, { content: content.toString('base64'), content_sha256: sha(content) });
    assert.equal(w.status, 200, w.text);
    const template = writeJobs((await batch.listNamespacedJob({ namespace: NS })).items).find((j) => JSON.stringify(j).includes('cut-template.txt'))!;
    assert.ok(template);
    const opId = `c${randomBytes(7).toString('hex').slice(0, 13)}00`;
    const name = `files-survival-${opId}`;
    const job = structuredClone(template) as V1Job;
    job.metadata = { name, namespace: NS, labels: { ...template.metadata!.labels!, [LABEL_FILES_OP]: opId } };
    job.spec!.template.metadata = { labels: { ...template.spec!.template.metadata!.labels!, [LABEL_FILES_OP]: opId } };
    delete job.spec!.selector;
    delete job.spec!.template.metadata.labels!['controller-uid'];
    delete job.spec!.template.metadata.labels!['batch.kubernetes.io/controller-uid'];
    delete job.spec!.template.metadata.labels!['job-name'];
    delete job.spec!.template.metadata.labels!['batch.kubernetes.io/job-name'];
    delete job.status;
    const args = job.spec!.template.spec!.containers[0]!.args!;
    const target = 'cut.txt';
    args[args.indexOf('--path') + 1] = target;
    const body = Buffer.alloc(200 << 10, 0x61);
    args[args.indexOf('--sha256') + 1] = sha(body);
    await batch.createNamespacedJob({ namespace: NS, body: job });
    const ip = await until(
      async () => {
        const pods = (await core.listNamespacedPod({ namespace: NS, labelSelector: `${LABEL_FILES_OP}=${opId}` })).items;
        return pods.map((p) => callableAddress(p, FILES_CONTAINER)).find(Boolean);
      },
      'the write Pod callable',
      tierMs(20_000),
    );
    const token = jobToken(readFileSync(join(s.dataDir, 'job-key')), name);
    const port = Number(job.spec!.template.spec!.containers[0]!.ports![0]!.containerPort);
    // Half the body, then the connection is gone (the function died mid-stream). The program may
    // still be starting its listener: retried until a connection is made.
    await until(
      () =>
        new Promise<true | undefined>((resolve) => {
          const req = http.request({ host: ip, port, method: 'PUT', path: '/content', agent: false, headers: { authorization: `Bearer ${token}`, 'content-length': String(body.length) } });
          req.on('error', () => resolve(undefined));
          req.on('socket', (sock) =>
            sock.once('connect', () => {
              req.write(body.subarray(0, body.length >> 1), () => setTimeout(() => (req.destroy(), resolve(true)), 50));
            }),
          );
          req.flushHeaders();
        }),
      'a connection to the write Pod',
      tierMs(10_000),
    );
    const ended = await until(
      async () => {
        const j = (await batch.listNamespacedJob({ namespace: NS, labelSelector: `${LABEL_FILES_OP}=${opId}` })).items[0];
        return j?.status?.conditions?.some((c) => c.status === 'True' && ['Failed', 'FailureTarget', 'Complete', 'SuccessCriteriaMet'].includes(c.type)) ? j : undefined;
      },
      'the cut write Job ended',
      tierMs(40_000),
    );
    assert.ok((ended.status!.failed ?? 0) >= 1, 'it ended as failed: it printed no result');
    assert.equal(existsSync(join(s.world, target)), false, 'nothing was written');
    assert.ok(!readdirSync(s.world).some((n) => isEditName(n)), 'no working file left');
    const holder = await s.call('GET', '/api/v1/servers/survival/holder');
    assert.equal(holder.body.held, false, holder.text);
  });
});

describe('write content without a job key (the Felis-compatible fallback)', () => {
  let s: Stack;
  before(async () => {
    s = await startStack({ editor: { ttlSeconds: REAL ? 60 : 6000 } });
  });
  after(async () => {
    await s?.close();
  });

  test('the content rides in the Pod spec (FELIS_FILE_CONTENT_*): a namespace reader sees it, as the README says', async () => {
    const kc = s.cluster.kubeConfig(s.cluster.adminToken);
    const content = distinctive();
    const w = await s.call('PUT', `/api/v1/servers/survival/file?path=${q('fallback.txt')}`, { content: content.toString('base64'), content_sha256: sha(content) });
    assert.equal(w.status, 200, w.text);
    assert.deepEqual(w.body, { path: 'fallback.txt', status: 'written', sha256: sha(content) });
    const found = await scan(kc.makeApiClient(CoreV1Api), kc.makeApiClient(BatchV1Api), content);
    assert.ok(found.hits.length >= 1, 'the scan finds the content');
  });

  test("Felis's 256 KiB still goes through the env; 256 KiB + 1 is 413 saying why", async () => {
    const max = randomBytes(256 << 10);
    const w = await s.call('PUT', `/api/v1/servers/survival/file?path=${q('max.bin')}`, { content: max.toString('base64'), content_sha256: sha(max) });
    assert.equal(w.status, 200, w.text);
    assert.deepEqual(readFileSync(join(s.world, 'max.bin')), max);
    const over = randomBytes((256 << 10) + 1);
    const big = await s.call('PUT', `/api/v1/servers/survival/file?path=${q('max.bin')}`, { content: over.toString('base64'), content_sha256: sha(over) });
    assert.equal(big.status, 413, big.text);
    assert.equal(big.body.error.code, 'too_large');
    assert.match(big.body.error.message, /^content is 262145 bytes; a write carries at most 262144 bytes through the Job's environment/);
  });
});

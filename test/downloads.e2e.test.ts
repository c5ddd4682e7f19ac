/**
 * Downloads end to end, through the real client-node: sign a URL with the bearer token, open it
 * without one, and receive the file or the folder's zip from the export Job's Pod through the
 * function; tampered and expired URLs refused before any Job; the export Job holding the world
 * while it streams (a start is refused naming it); a cut download resumed with Range / If-Range,
 * never spliced across a change; nothing left behind.
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { downloadKey, signTicket } from '../lib/downloads/signing.ts';
import { jobFinished } from '../lib/kube/job-facts.ts';
import { FUNCTION_USER, q, REAL, type Stack, startStack, TOKEN, tierMs, until } from './support/stack.ts';

const EXPORTS = 'app.kubernetes.io/managed-by=felis-export';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('downloads', () => {
  let s: Stack;
  let core: CoreV1Api;
  let batch: BatchV1Api;
  before(async () => {
    // Browse sessions too, as the job key gives every deployment: signing asks one about a folder.
    // A short idle, so the session's Pod has ended by the last test, which counts every Pod.
    s = await startStack({ downloads: {}, browse: { idleSeconds: 2 }, editor: REAL ? { ttlSeconds: 2 } : undefined });
    const kc = s.cluster.kubeConfig(s.cluster.adminToken);
    core = kc.makeApiClient(CoreV1Api);
    batch = kc.makeApiClient(BatchV1Api);
  });
  after(async () => {
    await s?.close();
  });

  const exportJobs = async () => (await batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: EXPORTS })).items;
  const allEnded = async () => ((await exportJobs()).every(jobFinished) ? true : undefined);
  const sign = async (path: string, dir = false) => {
    const r = await s.call('POST', `/api/v1/servers/survival/files/download?path=${q(path)}${dir ? '&dir=true' : ''}`);
    assert.equal(r.status, 200, r.text);
    return r.body as { url: string; filename: string; expires_at: string };
  };
  /** Opens a signed URL as a browser would (against the API it called): no Authorization header. */
  const open = (url: string) => fetch(new URL(url, s.url));

  test('sign, then GET without a bearer: the same bytes, with Content-Length and the download headers', async () => {
    const data = randomBytes(5 << 20);
    mkdirSync(join(s.world, 'backups'), { recursive: true });
    writeFileSync(join(s.world, 'backups', 'säve 1.bin'), data);
    const signed = await sign('backups/säve 1.bin');
    assert.equal(signed.filename, 'säve 1.bin');
    // No FELIS_DOWNLOAD_BASE_URL in this stack: origin-relative.
    assert.ok(signed.url.startsWith('/api/v1/exports/'), signed.url);
    s.cluster.resetCounts();
    const r = await open(signed.url);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-length'), String(data.length));
    assert.equal(r.headers.get('content-type'), 'application/octet-stream');
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(r.headers.get('cache-control'), 'no-store');
    assert.ok(r.headers.get('x-request-id'));
    assert.equal(r.headers.get('content-disposition'), `attachment; filename="s_ve 1.bin"; filename*=UTF-8''s%C3%A4ve%201.bin`);
    assert.equal(sha(Buffer.from(await r.arrayBuffer())), sha(data));
    // One export Job, in Felis's shape, created by the function's identity.
    assert.equal(s.cluster.counts(FUNCTION_USER)['create jobs'], 1);
    const [job] = await exportJobs();
    assert.match(job!.metadata!.name!, /^export-survival-[0-9a-f]{16}$/);
    assert.equal(job!.metadata!.labels!['felis.lolicon.best/export-mode'], 'files');
    // A transfer Job: the background ops' CPU, not a one-shot op's.
    assert.equal(job!.spec!.template.spec!.containers[0]!.resources!.limits!.cpu, '1');
    await until(allEnded, 'the export Job to end', tierMs(10_000, 30_000));
  });

  test('server.properties comes redacted; the forwarding secret is refused by path and by link', async () => {
    const props = await open((await sign('server.properties')).url);
    assert.equal(props.status, 200);
    const text = await props.text();
    assert.ok(!text.includes('hunter2') && text.includes('rcon.password=<redacted by felis>'), text);
    writeFileSync(join(s.world, 'innocent.yml'), '');
    execFileSync('ln', ['-sf', 'config/paper-global.yml', join(s.world, 'innocent.yml')]);
    for (const p of ['config/paper-global.yml', 'innocent.yml']) {
      const r = await open((await sign(p)).url);
      assert.equal(r.status, 400, p);
      const body = (await r.json()) as { error: { code: string } };
      assert.equal(body.error.code, 'bad_path');
    }
    const missing = await open((await sign('nope.txt')).url);
    assert.equal(missing.status, 404);
    await until(allEnded, 'the export Jobs to end', tierMs(10_000, 30_000));
  });

  test('a folder signed without dir=true is 400 at signing, in words that say how; with dir=true it signs', async () => {
    mkdirSync(join(s.world, 'notes'), { recursive: true });
    writeFileSync(join(s.world, 'notes', 'a.txt'), 'a');
    const r = await s.call('POST', `/api/v1/servers/survival/files/download?path=${q('notes')}`);
    assert.equal(r.status, 400, r.text);
    assert.deepEqual([r.body.error.code, r.body.error.message], ['bad_path', 'notes is a folder; sign it with dir=true']);
    assert.equal((await sign('notes', true)).filename, 'notes.zip');
    // A file still signs without dir=true.
    assert.equal((await sign('notes/a.txt')).filename, 'a.txt');
  });

  test('a folder as a zip that passes unzip -t, without the secret', async () => {
    const signed = await sign('config', true);
    assert.equal(signed.filename, 'config.zip');
    const r = await open(signed.url);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'application/zip');
    assert.equal(r.headers.get('content-length'), null);
    const zip = join(s.dataDir, 'config.zip');
    writeFileSync(zip, Buffer.from(await r.arrayBuffer()));
    execFileSync('unzip', ['-t', zip]);
    const names = execFileSync('unzip', ['-Z1', zip]).toString().split('\n');
    assert.ok(names.includes('config/'), names.join(','));
    assert.ok(!names.some((n) => n.endsWith('paper-global.yml')), names.join(','));
    await until(allEnded, 'the export Job to end', tierMs(10_000, 30_000));
  });

  test('tampered, foreign and expired URLs are refused before any Job; the world root cannot be signed', async () => {
    const signed = await sign('eula.txt');
    const u = new URL(signed.url, s.url);
    const [, , , , ticket] = u.pathname.split('/');
    const [payload, sig] = ticket!.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const other = Buffer.from(JSON.stringify({ ...claims, p: 'server.properties' })).toString('base64url');
    s.cluster.resetCounts();
    for (const bad of [`${other}.${sig}`, `${payload}.${Buffer.alloc(32).toString('base64url')}`, 'x.y']) {
      const r = await open(`${s.url}/api/v1/exports/${bad}/download`);
      assert.equal(r.status, 404, bad);
      assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'not_found');
    }
    const root = await s.call('POST', `/api/v1/servers/survival/files/download?path=${q('.')}&dir=true`);
    assert.equal(root.status, 400);
    assert.equal(root.body.error.code, 'bad_path');
    assert.equal(s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0, 0);

    // Tickets signed with the deployment's key but expired, and with another key (the real tier
    // runs one stack at a time, so these are made here rather than by a second stack).
    const key = downloadKey(readFileSync(join(s.dataDir, 'job-key')));
    const base = { namespace: 'minecraft', server: 'survival', path: 'eula.txt', dir: false };
    const expired = signTicket(key, { ...base, expires: Math.floor(Date.now() / 1000) - 1 });
    const late = await open(`${s.url}/api/v1/exports/${expired}/download`);
    assert.equal(late.status, 410);
    assert.equal(((await late.json()) as { error: { code: string } }).error.code, 'export_expired');
    const foreign = signTicket(downloadKey(randomBytes(32)), { ...base, expires: Math.floor(Date.now() / 1000) + 600 });
    assert.equal((await open(`${s.url}/api/v1/exports/${foreign}/download`)).status, 404);
    // The same claims with the right key do open (so the two refusals above are about the key and the time).
    const good = await open(`${s.url}/api/v1/exports/${signTicket(key, { ...base, expires: Math.floor(Date.now() / 1000) + 600 })}/download`);
    assert.equal(good.status, 200);
    await good.arrayBuffer();
    assert.equal(s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0, 1, 'only the good ticket started a Job');
    await until(allEnded, 'the export Job to end', tierMs(10_000, 30_000));
  });

  test('while a download streams the export Job holds the world: a start is refused naming it; a caller that goes away ends it', async () => {
    const big = randomBytes(64 << 20);
    writeFileSync(join(s.world, 'big.bin'), big);
    const r = await open((await sign('big.bin')).url);
    assert.equal(r.status, 200);
    const reader = r.body!.getReader();
    const first = await reader.read();
    assert.ok(first.value && first.value.length > 0);
    const h = await s.call('GET', '/api/v1/servers/survival/holder');
    assert.equal(h.body.held, true, h.text);
    assert.equal(h.body.kind, 'export');
    assert.match(h.body.job, /^export-survival-/);
    const start = await s.call('POST', '/api/v1/servers/survival/start');
    assert.equal(start.status, 409, start.text);
    assert.equal(start.body.error.code, 'maintenance_in_progress');
    assert.match(start.body.error.message, /export/);
    const job = h.body.job as string;
    await reader.cancel();
    await until(allEnded, 'the export Job to end after the caller went away', tierMs(10_000, 30_000));
    // Stopped part way (the program exits 1 when its receiver goes away), not run to the end.
    const ended = (await exportJobs()).find((j) => j.metadata?.name === job)!;
    assert.ok((ended.status?.failed ?? 0) >= 1, JSON.stringify(ended.status));
    const free = await s.call('GET', '/api/v1/servers/survival/holder');
    assert.equal(free.body.held, false, free.text);
  });

  /** Reads a body to its end, hashing it as it comes; the byte count too. */
  const drain = async (r: Response) => {
    const h = createHash('sha256');
    let n = 0;
    for await (const c of r.body as unknown as AsyncIterable<Uint8Array>) {
      h.update(c);
      n += c.length;
    }
    return { n, sha: h.digest('hex') };
  };

  test('resume: a 200 MiB file cut at a random byte and resumed with Range + If-Range is byte-identical; a file changed in between is never spliced', async () => {
    const size = 200 << 20;
    let data: Buffer | undefined = randomBytes(size);
    const whole = sha(data);
    writeFileSync(join(s.world, 'huge.bin'), data);
    data = undefined;
    const { url } = await sign('huge.bin');
    const first = await open(url);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('accept-ranges'), 'bytes');
    assert.equal(first.headers.get('content-length'), String(size));
    const etag = first.headers.get('etag');
    assert.match(etag ?? '', /^"[!#-~]+"$/);
    // Cut at a random byte: the reader keeps exactly `cut` bytes and goes away.
    const cut = 1 + Math.floor(Math.random() * (size - 2));
    const h = createHash('sha256');
    let got = 0;
    const reader = first.body!.getReader();
    while (got < cut) {
      const { value, done } = await reader.read();
      assert.ok(!done, `the body ended at ${got} before the cut at ${cut}`);
      const keep = value.subarray(0, Math.min(value.length, cut - got));
      h.update(keep);
      got += keep.length;
    }
    await reader.cancel();
    await until(allEnded, 'the cut export Job to end', tierMs(10_000, 30_000));

    // The same URL again (a URL may be opened more than once), from the cut on.
    const rest = await fetch(new URL(url, s.url), { headers: { range: `bytes=${cut}-`, 'if-range': etag! } });
    assert.equal(rest.status, 206);
    assert.equal(rest.headers.get('content-range'), `bytes ${cut}-${size - 1}/${size}`);
    assert.equal(rest.headers.get('content-length'), String(size - cut));
    assert.equal(rest.headers.get('etag'), etag);
    assert.equal(rest.headers.get('accept-ranges'), 'bytes');
    assert.match(rest.headers.get('content-disposition') ?? '', /^attachment; filename="huge.bin"/);
    for await (const c of rest.body as unknown as AsyncIterable<Uint8Array>) {
      h.update(c);
      got += c.length;
    }
    assert.equal(got, size);
    assert.equal(h.digest('hex'), whole, 'the cut download and its resumption, concatenated, are the file');
    await until(allEnded, 'the resumed export Job to end', tierMs(10_000, 30_000));

    // Rewritten between the two requests: the old If-Range gets the whole new file (200), never a splice.
    let changed: Buffer | undefined = randomBytes(size);
    const changedSha = sha(changed);
    writeFileSync(join(s.world, 'huge.bin'), changed);
    changed = undefined;
    const stale = await fetch(new URL(url, s.url), { headers: { range: `bytes=${cut}-`, 'if-range': etag! } });
    assert.equal(stale.status, 200);
    assert.equal(stale.headers.get('content-range'), null);
    assert.equal(stale.headers.get('content-length'), String(size));
    const newEtag = stale.headers.get('etag');
    assert.ok(newEtag && newEtag !== etag, `${newEtag} vs ${etag}`);
    assert.deepEqual(await drain(stale), { n: size, sha: changedSha });
    await until(allEnded, 'the export Job to end', tierMs(10_000, 30_000));

    // A Range alone asks for bytes of the file as it is now: served, under the new ETag that tells
    // a careful client the file changed (one that sends If-Range never meets this).
    const bare = await fetch(new URL(url, s.url), { headers: { range: `bytes=${size - 10}-` } });
    assert.equal(bare.status, 206);
    assert.equal(bare.headers.get('etag'), newEtag);
    assert.equal((await drain(bare)).n, 10);
    await until(allEnded, 'the export Job to end', tierMs(10_000, 30_000));
  });

  test('a range past the end is 416 range_not_satisfiable with bytes */size; a folder ignores Range and says Accept-Ranges: none', async () => {
    writeFileSync(join(s.world, 'small.txt'), 'twelve bytes');
    const r = await fetch(new URL((await sign('small.txt')).url, s.url), { headers: { range: 'bytes=12-' } });
    assert.equal(r.status, 416);
    assert.equal(r.headers.get('content-range'), 'bytes */12');
    const body = (await r.json()) as { error: { code: string } };
    assert.equal(body.error.code, 'range_not_satisfiable');
    await until(allEnded, 'the export Job to end', tierMs(10_000, 30_000));
    const z = await fetch(new URL((await sign('config', true)).url, s.url), { headers: { range: 'bytes=10-' } });
    assert.equal(z.status, 200);
    assert.equal(z.headers.get('accept-ranges'), 'none');
    assert.equal(z.headers.get('content-range'), null);
    const zip = Buffer.from(await z.arrayBuffer());
    assert.equal(zip.subarray(0, 4).toString('hex'), '504b0304');
    await until(allEnded, 'the export Job to end', tierMs(10_000, 30_000));
  });

  test('nothing is left: every export Pod ends and the finished Jobs are removed', async () => {
    await until(
      async () => ((await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: EXPORTS })).items.length === 0 ? true : undefined),
      'the export Pods to go',
      tierMs(15_000, 60_000),
    );
    await until(async () => ((await exportJobs()).length === 0 ? true : undefined), 'the export Jobs to go', tierMs(15_000, 60_000));
    if (!REAL) {
      const cluster = s.cluster as unknown as { podAddressesInUse(): number };
      await until(async () => (cluster.podAddressesInUse() === 0 ? true : undefined), 'the kubelet to end every Pod', 5000);
    }
  });

  test('a forged Host header does not reach the signed URL', async () => {
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const u = new URL(`${s.url}/api/v1/servers/survival/files/download?path=eula.txt`);
      const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'POST', headers: { host: 'evil.example:443', authorization: `Bearer ${TOKEN}` } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(answer.status, 200, answer.text);
    const url = JSON.parse(answer.text).url as string;
    assert.doesNotMatch(url, /evil/);
    assert.match(url, /^\/api\/v1\/exports\/[^/]+\/download$/);
  });
});

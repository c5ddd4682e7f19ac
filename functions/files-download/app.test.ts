import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import type { DownloadConfig } from '../../lib/downloads/config.ts';
import { Downloads } from '../../lib/downloads/downloads.ts';
import { ANNOTATION_MAINTENANCE } from '../../lib/labels.ts';
import { NotStoppedError } from '../../lib/maintenance/errors.ts';
import { MaintenanceGates } from '../../lib/maintenance/file-gates.ts';
import { WorldLock } from '../../lib/maintenance/world-lock.ts';
import { jobToken } from '../../lib/protocol/job-token.ts';
import { FakeServerApi } from '../../lib/testing/fake-servers.ts';
import { felisGamePod, felisServer } from '../../lib/testing/felis-fixtures.ts';
import { envelopeOf, FakeGates, routeKit } from '../../lib/testing/route-kit.ts';
import { filesDownload, KIND_WAIT_MS } from './app.ts';

const KEY = Buffer.alloc(32, 5);
const SETTINGS = {
  namespace: 'minecraft',
  image: 'felis-world/files:dev',
  command: ['/usr/local/bin/felis', 'files'],
  serviceAccount: 'felis-restore',
  worldsRoot: '/data',
  deadlineSeconds: 120,
  ttlSeconds: 120,
};

type PodAnswer = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A stand-in for the export Pod: checks the token of the Job that was created, then answers as told. */
async function fakePod(): Promise<{ port: number; answer: PodAnswer; tokens: string[]; gone: Promise<void>[]; server: http.Server }> {
  const state = {
    port: 0,
    tokens: [] as string[],
    gone: [] as Promise<void>[],
    answer: ((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 5 });
      res.end('hello');
    }) as PodAnswer,
    server: undefined as unknown as http.Server,
  };
  state.server = http.createServer((req, res) => {
    state.tokens.push(req.headers.authorization ?? '');
    state.gone.push(new Promise((r) => res.once('close', () => r())));
    state.answer(req, res);
  });
  await new Promise<void>((r) => state.server.listen(0, '127.0.0.1', r));
  state.port = (state.server.address() as AddressInfo).port;
  after(() => {
    state.server.closeAllConnections();
    state.server.close();
  });
  return state;
}

/** A ServerApi whose created export Jobs get a running Pod at 127.0.0.1 at once. */
class ClusterFake extends FakeServerApi {
  override async createJob(ns: string, job: V1Job): Promise<V1Job> {
    const created = await super.createJob(ns, job);
    this.pods.push({
      metadata: { name: `${job.metadata!.name}-abcde`, labels: { ...job.spec!.template.metadata!.labels } },
      status: { phase: 'Running', podIP: '127.0.0.1', containerStatuses: [{ name: 'files', ready: true, restartCount: 0, image: 'x', imageID: 'x', state: { running: {} } }] },
    });
    return created;
  }
}

async function kit(cfg: Partial<DownloadConfig> = {}, opts: { noKey?: boolean } = {}) {
  const pod = await fakePod();
  const api = new ClusterFake();
  api.put(felisServer('survival'));
  api.claims.add('world-survival-0');
  let now = Date.UTC(2026, 11, 1, 10, 0, 0);
  const lock = new WorldLock(api, { namespace: 'minecraft', now: () => new Date(now) });
  const config: DownloadConfig = { keyFile: '/nonexistent', urlSeconds: 600, maxPerServer: 2, idleSeconds: 60, startTimeoutMs: 2_000, deadlineSeconds: 7200, ...cfg };
  const downloads = new Downloads(api, lock, SETTINGS, config, { key: opts.noKey ? undefined : KEY, now: () => now, port: pod.port, newId: () => '0123456789abcdef' });
  const gates = new FakeGates();
  const k = routeKit(filesDownload, { gates, servers: api });
  k.deps.downloads = downloads;
  return { ...k, api, pod, lock, advance: (ms: number) => (now += ms) };
}

const sign = (k: Awaited<ReturnType<typeof kit>>, path: string, dir = false) => k.call('POST', `/api/v1/servers/survival/files/download?path=${encodeURIComponent(path)}${dir ? '&dir=true' : ''}`);
const ticketPath = (url: string) => new URL(url, 'http://base.invalid').pathname;
const get = (k: Awaited<ReturnType<typeof kit>>, path: string, method = 'GET') => k.app.request(path, { method });

test('sign: 200 {url, filename, expires_at}, gates entered, audited; no Job and no lock yet', async () => {
  const k = await kit();
  const r = await sign(k, 'plugins/Essentials.jar');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(Object.keys(r.body).sort(), ['expires_at', 'filename', 'url']);
  // No FELIS_DOWNLOAD_BASE_URL: origin-relative, never the origin the request named.
  assert.match(r.body.url, /^\/api\/v1\/exports\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\/download$/);
  assert.equal(r.body.filename, 'Essentials.jar');
  assert.equal(r.body.expires_at, '2026-12-01T10:10:00Z');
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'read', path: 'plugins/Essentials.jar' } }]);
  assert.deepEqual(
    k.audits().map((a) => [a.action, a.payload]),
    [['file.download', { dir: false }]],
  );
  assert.deepEqual(k.api.calls, []);
  const d = await sign(k, 'world', true);
  assert.equal(d.body.filename, 'world.zip');
});

test('sign without dir=true asks a browse session whether the path is a folder: a folder is 400 at signing, a file, or no answer within KIND_WAIT_MS, signs', async () => {
  const k = await kit();
  const asked: unknown[] = [];
  const folderAnswer = JSON.stringify({ entries: [{ name: 'a', size: 1, is_dir: false, mod_time: '2026-11-30T10:00:00Z', mode: '644', is_symlink: false }], truncated: true });
  let answer: string | undefined = folderAnswer;
  k.deps.browse = {
    run: async (_t, op, path, _s, _e, query) => {
      asked.push({ op, path, query });
      return answer;
    },
  };
  const folder = await sign(k, 'notes/');
  assert.equal(folder.status, 400, folder.text);
  assert.equal(envelopeOf(folder).code, 'bad_path');
  assert.equal(envelopeOf(folder).message, 'notes is a folder; sign it with dir=true');
  assert.deepEqual(asked.slice(), [{ op: 'list', path: 'notes/', query: { limit: 1 } }]);
  assert.equal(k.audits().length, 0, 'a refusal is not audited');
  // With dir=true nothing is asked.
  assert.equal((await sign(k, 'notes', true)).status, 200);
  assert.equal(asked.length, 1);
  // A file: the listing fails (not a folder), and the URL is signed.
  answer = JSON.stringify({ code: 'bad_path', error: 'notes.txt: not a directory' });
  assert.equal((await sign(k, 'notes.txt')).status, 200);
  // A session still starting: asked again until it answers, so a cold server's folder is refused too.
  let cold = 2;
  k.deps.browse = {
    run: async (_t, op, path, _s, _e, query) => {
      asked.push({ op, path, query });
      return cold-- > 0 ? undefined : folderAnswer;
    },
  };
  const before = asked.length;
  const coldFolder = await sign(k, 'notes');
  assert.equal(coldFolder.status, 400, coldFolder.text);
  assert.equal(asked.length - before, 3, 'asked until a session answered');
  // No session answers within KIND_WAIT_MS: signed, the export Job decides when the URL is opened.
  k.deps.browse = { run: async () => undefined };
  const t0 = performance.now();
  assert.equal((await sign(k, 'notes')).status, 200);
  assert.ok(performance.now() - t0 >= KIND_WAIT_MS - 300, 'it waited for a starting session');

  assert.deepEqual(
    k.api.calls.filter((c) => c.startsWith('create job')),
    [],
    'no Job for signing',
  );
});

test('sign refuses: the world root (bad_path), no path (bad_request), a bad name, the gates, no bearer, no key, no image', async () => {
  const k = await kit();
  for (const p of ['.', '/', './', '//.']) assert.equal(envelopeOf(await sign(k, p)).code, 'bad_path', p);
  // It says what the caller can do here, and names no route this API has not.
  assert.equal(envelopeOf(await sign(k, '.')).message, '".": the path names the whole world, which cannot be downloaded at once; sign each of its folders with dir=true');
  assert.equal(envelopeOf(await k.call('POST', '/api/v1/servers/survival/files/download')).code, 'bad_request');
  assert.equal(envelopeOf(await k.call('POST', '/api/v1/servers/BAD!/files/download?path=a')).code, 'bad_name');
  k.gates.enterError = new NotStoppedError();
  const ns = await sign(k, 'a');
  assert.equal(ns.status, 409);
  assert.equal(envelopeOf(ns).code, 'not_stopped');
  k.gates.enterError = undefined;
  const anon = await k.app.request('/api/v1/servers/survival/files/download?path=a', { method: 'POST' });
  assert.equal(anon.status, 401);
  const noKey = await kit({}, { noKey: true });
  const r = await sign(noKey, 'a');
  assert.equal(r.status, 503);
  assert.equal(envelopeOf(r).code, 'export_unavailable');
  const none = routeKit(filesDownload);
  assert.equal(envelopeOf(await none.call('POST', '/api/v1/servers/survival/files/download?path=a')).code, 'export_unavailable');
  const noImage = routeKit(filesDownload, { editor: null });
  assert.equal(envelopeOf(await noImage.call('POST', '/api/v1/servers/survival/files/download?path=a')).code, 'files_unavailable');
  assert.equal(k.audits().length, 0);
});

test('GET without a bearer: the export Job (Felis labels, export lock taken and given back), the Pod asked with its token, streamed with the download headers', async () => {
  const k = await kit();
  const s = await sign(k, 'plugins/Ünï "x".jar');
  const r = await get(k, ticketPath(s.body.url));
  assert.equal(r.status, 200, await r.clone().text());
  assert.equal(await r.text(), 'hello');
  assert.equal(r.headers.get('content-length'), '5');
  assert.equal(r.headers.get('content-type'), 'application/octet-stream');
  assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(r.headers.get('cache-control'), 'no-store');
  assert.equal(r.headers.get('content-disposition'), `attachment; filename="_n_ _x_.jar"; filename*=UTF-8''%C3%9Cn%C3%AF%20%22x%22.jar`);
  const [job] = k.api.jobs;
  assert.equal(job!.metadata!.name, 'export-survival-0123456789abcdef');
  assert.deepEqual(job!.metadata!.labels, {
    'app.kubernetes.io/managed-by': 'felis-export',
    'app.kubernetes.io/component': 'world-export',
    'felis.lolicon.best/server': 'survival',
    'felis.lolicon.best/export-mode': 'files',
    'felis.lolicon.best/export-id': '0123456789abcdef',
  });
  const c = job!.spec!.template.spec!.containers[0]!;
  assert.deepEqual(c.command, ['/usr/local/bin/felis', 'export']);
  assert.deepEqual(c.args, ['--mode', 'files', '--server', 'survival', '--worlds-root', '/data', '--path', 'plugins/Ünï "x".jar']);
  assert.equal(job!.spec!.template.spec!.volumes![0]!.persistentVolumeClaim!.readOnly, true);
  assert.ok(!JSON.stringify(job).includes(jobToken(KEY, job!.metadata!.name!)), 'the token itself is not in the spec');
  assert.deepEqual(k.pod.tokens, [`Bearer ${jobToken(KEY, 'export-survival-0123456789abcdef')}`]);
  // The lock was taken (a patch under the resourceVersion) and given back once the Job existed.
  const patches = k.api.calls.filter((x) => x.startsWith('patch') || x.startsWith('create'));
  assert.deepEqual(patches, ['patch survival', 'create job export-survival-0123456789abcdef', 'patch survival']);
  assert.equal(k.api.annotation('survival', ANNOTATION_MAINTENANCE), undefined);
});

test('a folder comes as a zip without a length', async () => {
  const k = await kit();
  k.pod.answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/zip' });
    res.write('PK');
    res.end('rest');
  };
  const s = await sign(k, 'world', true);
  const r = await get(k, ticketPath(s.body.url));
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'application/zip');
  assert.equal(r.headers.get('content-length'), null);
  assert.equal(r.headers.get('content-disposition'), 'attachment; filename="world.zip"');
  assert.equal(await r.text(), 'PKrest');
  assert.ok(k.api.jobs[0]!.spec!.template.spec!.containers[0]!.args!.includes('--dir'));
});

test('tampered or foreign tickets are 404 not_found, expired ones 410 export_expired; HEAD is 405; none starts a Job', async () => {
  const k = await kit();
  const s = await sign(k, 'a.txt');
  const path = ticketPath(s.body.url);
  const ticket = path.split('/')[4]!;
  const [payload, sig] = ticket.split('.') as [string, string];
  const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), p: 'server.properties' })).toString('base64url');
  for (const bad of [`${forged}.${sig}`, `${payload}.${sig.slice(0, -1)}A`, 'nonsense', `${payload}`]) {
    const r = await get(k, `/api/v1/exports/${bad}/download`);
    assert.equal(r.status, 404, bad);
    assert.equal(((await r.json()) as any).error.code, 'not_found');
  }
  const other = await kit();
  other.deps.downloads = new Downloads(other.api, other.lock, SETTINGS, other.deps.downloads!.config, { key: Buffer.alloc(32, 6) });
  assert.equal((await get(other, path)).status, 404);
  assert.equal((await get(k, path, 'HEAD')).status, 405);
  k.advance(600_000);
  const late = await get(k, path);
  assert.equal(late.status, 410);
  assert.equal(((await late.json()) as any).error.code, 'export_expired');
  assert.equal(k.api.jobs.length, 0);
});

test('GET checks the gates again, and a held world refuses with 409 naming the holder', async () => {
  const k = await kit();
  const s = await sign(k, 'a.txt');
  k.gates.enterError = new NotStoppedError();
  assert.equal((await get(k, ticketPath(s.body.url))).status, 409);
  k.gates.enterError = undefined;
  k.api.jobs.push({ metadata: { name: 'mc-backup-1', labels: { 'app.kubernetes.io/managed-by': 'felis-backup', 'felis.lolicon.best/server': 'survival' } }, status: {} });
  const r = await get(k, ticketPath(s.body.url));
  assert.equal(r.status, 409);
  const e = ((await r.json()) as any).error;
  assert.equal(e.code, 'maintenance_in_progress');
  assert.match(e.message, /backup/);
  // A backup usually takes a while: try again in 30 s.
  assert.equal(r.headers.get('retry-after'), '30');
  assert.equal(k.api.jobs.length, 1);
});

test('a running server: signed and downloaded beside the game by an export Job pinned to its node, X-Felis-World-State: running; RWOP 409 volume_exclusive; off 409 not_stopped', async () => {
  const k = await kit();
  k.deps.gates = new MaintenanceGates(k.api, k.lock);
  // Stopped: the answer says so.
  const stopped = await get(k, ticketPath((await sign(k, 'a.txt')).body.url));
  assert.equal(stopped.status, 200);
  assert.equal(stopped.headers.get('x-felis-world-state'), 'stopped');
  await stopped.arrayBuffer();
  k.api.write('survival', { spec: { desiredState: 'Running' }, status: { phase: 'Running', ready: true, nodeName: 'node-b' } });
  for (const dir of [false, true]) {
    // Each export Job here has the same name: the last one is gone, as if it had ended.
    k.api.jobs = [];
    k.api.pods = [felisGamePod('survival')];
    const s = await sign(k, dir ? 'world' : 'world/region/r.0.0.mca', dir);
    assert.equal(s.status, 200, s.text);
    const r = await get(k, ticketPath(s.body.url));
    assert.equal(r.status, 200, await r.clone().text());
    assert.equal(r.headers.get('x-felis-world-state'), 'running');
    await r.arrayBuffer();
    const job = k.api.jobs.at(-1)!;
    // Felis's export shape (it holds the world as `export` while it streams), read-only, as the game's uid, on the game's node.
    assert.equal(job.metadata!.labels!['app.kubernetes.io/managed-by'], 'felis-export');
    assert.deepEqual(job.spec!.template.spec!.nodeSelector, { 'felis.node-restriction.kubernetes.io/identity': 'node-b' });
    assert.equal(job.spec!.template.spec!.volumes![0]!.persistentVolumeClaim!.readOnly, true);
    assert.deepEqual(job.spec!.template.spec!.containers[0]!.securityContext!.capabilities, { drop: ['ALL'] });
  }
  assert.equal(k.api.annotation('survival', ANNOTATION_MAINTENANCE), undefined, 'the export lock was given back');
  // A claim only the game's Pod may mount: refused when signing and when opening, no Job.
  const signed = await sign(k, 'a.txt');
  k.api.claimModes.set('world-survival-0', ['ReadWriteOncePod']);
  k.api.jobs = [];
  const jobs = 0;
  assert.equal(envelopeOf(await sign(k, 'a.txt')).code, 'volume_exclusive');
  const opened = await get(k, ticketPath(signed.body.url));
  assert.equal(opened.status, 409);
  assert.equal(((await opened.json()) as any).error.code, 'volume_exclusive');
  assert.equal(k.api.jobs.length, jobs);
  // Off: Felis's gate, at the sign and at the admission alike.
  k.api.claimModes.delete('world-survival-0');
  k.deps.gates = new MaintenanceGates(k.api, k.lock, { readWhileRunning: false });
  assert.equal(envelopeOf(await sign(k, 'a.txt')).code, 'not_stopped');
  k.deps.gates = new FakeGates();
  k.deps.downloads = new Downloads(k.api, k.lock, SETTINGS, k.deps.downloads!.config, { key: KEY, port: k.pod.port, readWhileRunning: false });
  const off = await get(k, ticketPath((await sign(k, 'a.txt')).body.url));
  assert.equal(off.status, 409);
  assert.equal(((await off.json()) as any).error.code, 'not_stopped');
  assert.equal(k.api.jobs.length, jobs);
});

test('downloads run side by side up to the per-server bound; one more is 429 export_busy with Retry-After', async () => {
  const k = await kit({ maxPerServer: 1 });
  k.api.jobs.push({
    metadata: {
      name: 'export-survival-ffffffffffffffff',
      labels: { 'app.kubernetes.io/managed-by': 'felis-export', 'felis.lolicon.best/export-mode': 'files', 'felis.lolicon.best/server': 'survival' },
    },
    status: {},
  });
  const s = await sign(k, 'a.txt');
  const r = await get(k, ticketPath(s.body.url));
  assert.equal(r.status, 429);
  assert.equal(((await r.json()) as any).error.code, 'export_busy');
  assert.equal(r.headers.get('retry-after'), '30');
  assert.equal(k.api.jobs.length, 1);
  // Under the bound, a running export does not refuse another.
  const two = await kit({ maxPerServer: 2 });
  two.api.jobs.push(structuredClone(k.api.jobs[0]!));
  const s2 = await sign(two, 'a.txt');
  assert.equal((await get(two, ticketPath(s2.body.url))).status, 200);
});

test("the Pod's refusal is the caller's error: not_found 404, bad_path 400, too_large 413; anything else 500", async () => {
  for (const [code, status] of [
    ['not_found', 404],
    ['bad_path', 400],
    ['too_large', 413],
  ] as const) {
    const k = await kit();
    k.pod.answer = (_req, res) => {
      res.writeHead(422, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code, error: `it said ${code}` }));
    };
    const s = await sign(k, 'a.txt');
    const r = await get(k, ticketPath(s.body.url));
    assert.equal(r.status, status);
    const e = ((await r.json()) as any).error;
    assert.equal(e.code, code);
    assert.equal(e.message, `it said ${code}`);
  }
  const k = await kit();
  k.pod.answer = (_req, res) => {
    res.writeHead(500);
    res.end('boom');
  };
  const s = await sign(k, 'a.txt');
  const r = await get(k, ticketPath(s.body.url));
  assert.equal(r.status, 500);
  assert.equal(((await r.json()) as any).error.code, 'internal');
});

test('an export Pod that never runs is 504 export_timeout; one that ended is 500', async () => {
  const k = await kit({ startTimeoutMs: 300 });
  k.api.createJob = async (_ns, job) => {
    k.api.jobs.push(job);
    return job;
  };
  const s = await sign(k, 'a.txt');
  const r = await get(k, ticketPath(s.body.url));
  assert.equal(r.status, 504);
  assert.equal(((await r.json()) as any).error.code, 'export_timeout');
  const e = await kit();
  e.api.createJob = async (_ns, job) => {
    e.api.jobs.push(job);
    e.api.pods.push({ metadata: { name: 'p', labels: { ...job.spec!.template.metadata!.labels } }, status: { phase: 'Failed' } });
    return job;
  };
  const s2 = await sign(e, 'a.txt');
  assert.equal((await get(e, ticketPath(s2.body.url))).status, 500);
});

test("the URL's origin is FELIS_DOWNLOAD_BASE_URL or none, never the request's Host", async () => {
  const k = await kit();
  const forged = await k.call('POST', '/api/v1/servers/survival/files/download?path=a.txt', undefined, { host: 'evil.example' });
  assert.equal(forged.status, 200, forged.text);
  assert.doesNotMatch(forged.body.url, /evil/);
  assert.match(forged.body.url, /^\/api\/v1\/exports\//);
  const based = await kit({ baseUrl: 'https://felis.example.com' });
  const r = await based.call('POST', 'http://evil.example/api/v1/servers/survival/files/download?path=a.txt', undefined, { host: 'evil.example' });
  assert.match(r.body.url, /^https:\/\/felis\.example\.com\/api\/v1\/exports\//);
});

test('the ticket carries who signed it; the GET is audited under that actor; the ticket never reaches a log', async () => {
  const k = await kit();
  const s = await sign(k, 'a.txt');
  const path = ticketPath(s.body.url);
  const ticket = path.split('/')[4]!;
  const claims = JSON.parse(Buffer.from(ticket.split('.')[0]!, 'base64url').toString());
  assert.equal(claims.a, 'bearer');
  const r = await get(k, path);
  assert.equal(r.status, 200);
  await r.arrayBuffer();
  const opened = k.audits().find((a) => a.action === 'file.download.open');
  assert.equal(opened?.actor, 'bearer');
  assert.equal(opened?.target, 'survival:a.txt');
  // A failure on the way (the Pod answers nonsense) is logged with the path, the ticket redacted.
  k.pod.answer = (_req, res) => {
    res.writeHead(502);
    res.end('?');
  };
  const failed = await get(k, path);
  assert.equal(failed.status, 500);
  const all = k.logs.join('');
  assert.ok(!all.includes(ticket.split('.')[1]!), 'the signature is in a log');
  assert.ok(!all.includes(ticket.split('.')[0]!), 'the payload is in a log');
  assert.match(all, /\/api\/v1\/exports\/<redacted>\/download/);
});

test('a file range: only Range and If-Range go to the Pod (bounded), and its 206 comes back with Content-Range, ETag, Accept-Ranges', async () => {
  const k = await kit();
  const seen: http.IncomingHttpHeaders[] = [];
  k.pod.answer = (req, res) => {
    seen.push(req.headers);
    res.writeHead(206, { 'content-type': 'application/octet-stream', 'content-length': 3, 'content-range': 'bytes 2-4/5', etag: '"fabc"', 'accept-ranges': 'bytes', 'x-other': 'no' });
    res.end('llo');
  };
  const s = await sign(k, 'a.txt');
  const r = await k.app.request(ticketPath(s.body.url), { headers: { range: 'bytes=2-', 'if-range': '"fabc"', cookie: 'c=1', 'if-none-match': '"x"' } });
  assert.equal(r.status, 206);
  assert.equal(await r.text(), 'llo');
  assert.equal(r.headers.get('content-range'), 'bytes 2-4/5');
  assert.equal(r.headers.get('content-length'), '3');
  assert.equal(r.headers.get('etag'), '"fabc"');
  assert.equal(r.headers.get('accept-ranges'), 'bytes');
  assert.equal(r.headers.get('x-other'), null);
  assert.equal(seen[0]!.range, 'bytes=2-');
  assert.equal(seen[0]!['if-range'], '"fabc"');
  assert.equal(seen[0]!.cookie, undefined);
  assert.equal(seen[0]!['if-none-match'], undefined);
  // An over-long If-Range drops the Range too: never a range without the validator the caller sent.
  const k2 = await kit();
  const seen2: http.IncomingHttpHeaders[] = [];
  k2.pod.answer = (req, res) => {
    seen2.push(req.headers);
    res.writeHead(200, { 'content-length': 5 });
    res.end('hello');
  };
  const s2 = await sign(k2, 'a.txt');
  const r2 = await k2.app.request(ticketPath(s2.body.url), { headers: { range: 'bytes=2-', 'if-range': `"${'e'.repeat(300)}"` } });
  assert.equal(r2.status, 200);
  assert.equal(seen2[0]!.range, undefined);
  assert.equal(seen2[0]!['if-range'], undefined);
});

test("the Pod's 416 is range_not_satisfiable in the envelope with Content-Range; a folder's answer is Accept-Ranges: none and its Range is not passed on", async () => {
  const k = await kit();
  k.pod.answer = (_req, res) => {
    res.writeHead(416, { 'content-range': 'bytes */5', etag: '"fabc"', 'accept-ranges': 'bytes', 'content-length': 0 });
    res.end();
  };
  const s = await sign(k, 'a.txt');
  const r = await k.app.request(ticketPath(s.body.url), { headers: { range: 'bytes=9-' } });
  assert.equal(r.status, 416);
  assert.equal(r.headers.get('content-range'), 'bytes */5');
  const e = ((await r.json()) as any).error;
  assert.equal(e.code, 'range_not_satisfiable');
  assert.match(e.message, /5 bytes/);
  const k2 = await kit();
  const seen: http.IncomingHttpHeaders[] = [];
  k2.pod.answer = (req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/zip', 'accept-ranges': 'none' });
    res.end('PK');
  };
  const z = await k2.app.request(ticketPath((await sign(k2, 'world', true)).body.url), { headers: { range: 'bytes=1-' } });
  assert.equal(z.status, 200);
  assert.equal(z.headers.get('accept-ranges'), 'none');
  assert.equal(z.headers.get('etag'), null);
  assert.equal(await z.text(), 'PK');
  assert.equal(seen[0]!.range, undefined);
  // A 206 for a folder, or one without a Content-Range, is not relayed as a download.
  const k3 = await kit();
  k3.pod.answer = (_req, res) => {
    res.writeHead(206, { 'content-length': 2 });
    res.end('lo');
  };
  const bad = await k3.app.request(ticketPath((await sign(k3, 'a.txt')).body.url), { headers: { range: 'bytes=3-' } });
  assert.equal(bad.status, 500);
});

/**
 * Signed upload URLs end to end, through the real client-node on either tier: sign with the bearer,
 * then PUT a raw body (no digest) or POST a multipart form of two files without one; each URL
 * places once and is refused after (also once the editor's Job TTL has passed: the claiming Job
 * is kept until the ticket expires), two uses at once have one winner, a download ticket opens no
 * upload and an upload ticket no download, hostile file names and a body over `max_bytes` are
 * refused with nothing placed.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BatchV1Api } from '@kubernetes/client-node';
import { q, REAL, type Stack, startStack } from '../../test/support/stack.ts';

const S = '/api/v1/servers/survival';
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

interface Signed {
  url: string;
  expires_at: string;
  max_bytes: number;
}

describe('signed upload URLs', () => {
  let s: Stack;
  let batch: BatchV1Api;
  before(async () => {
    // A Job TTL of 2 s: far shorter than a URL's life, so a claim kept only that long would lapse.
    s = await startStack({ browse: {}, downloads: {}, editor: { ttlSeconds: 2 } });
    batch = s.cluster.kubeConfig(s.cluster.adminToken).makeApiClient(BatchV1Api);
  });
  after(async () => {
    await s?.close();
  });

  const sign = async (path: string, flags = ''): Promise<Signed> => {
    const r = await s.call('POST', `${S}/files/upload-url?path=${q(path)}${flags}`);
    assert.equal(r.status, 200, r.text);
    return r.body as Signed;
  };
  /** As a browser on another page would: no Authorization header. */
  const use = (url: string, init: RequestInit) => fetch(new URL(url, s.url), init);
  const put = (url: string, body: string | Buffer, headers: Record<string, string> = {}) => use(url, { method: 'PUT', body, headers });
  const form = (url: string, files: [string, string][]) => {
    const fd = new FormData();
    for (const [name, content] of files) fd.append('files', new Blob([content]), name);
    return use(url, { method: 'POST', body: fd });
  };
  const codeOf = async (r: Response) => ((await r.json()) as { error: { code: string } }).error.code;

  test('sign, then PUT a raw body without bearer or digest: placed, its digest computed; the same URL again is refused', async () => {
    const signed = await sign('plugins/raw.txt');
    assert.ok(signed.url.startsWith('/api/v1/uploads/'), signed.url);
    assert.equal(signed.max_bytes, 64 << 20);
    const left = Date.parse(signed.expires_at) - Date.now();
    assert.ok(left > 590_000 && left <= 600_000, signed.expires_at);
    const r = await put(signed.url, 'raw bytes\n');
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), { path: 'plugins/raw.txt', status: 'uploaded', sha256: sha('raw bytes\n'), size: 10 });
    assert.equal(readFileSync(join(s.world, 'plugins', 'raw.txt'), 'utf8'), 'raw bytes\n');
    // The claiming Job is named from the ticket and kept until the ticket has expired.
    const jobs = (await batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/files-receive=true' })).items;
    assert.equal(jobs.length, 1);
    assert.match(jobs[0]!.metadata!.name!, /^files-survival-u[0-9a-f]{15}$/);
    assert.ok(jobs[0]!.spec!.ttlSecondsAfterFinished! >= 600, String(jobs[0]!.spec!.ttlSecondsAfterFinished));
    const again = await put(signed.url, 'second\n');
    assert.equal(again.status, 410);
    assert.equal(await codeOf(again), 'upload_url_used');
    assert.equal(readFileSync(join(s.world, 'plugins', 'raw.txt'), 'utf8'), 'raw bytes\n');
    // Past the editor's Job TTL the claim still holds: the Job was kept for the ticket's life.
    await new Promise((w) => setTimeout(w, REAL ? 8_000 : 4_000));
    const later = await put(signed.url, 'third\n');
    assert.equal(later.status, 410);
    assert.equal(readFileSync(join(s.world, 'plugins', 'raw.txt'), 'utf8'), 'raw bytes\n');
  });

  test('a Content-Digest, when given, is checked: the wrong one places nothing', async () => {
    const signed = await sign('plugins/digest.txt');
    const r = await put(signed.url, 'hello\n', { 'content-digest': `sha-256=:${createHash('sha256').update('other').digest('base64')}:` });
    assert.equal(r.status, 400);
    assert.equal(await codeOf(r), 'digest_mismatch');
    assert.equal(existsSync(join(s.world, 'plugins', 'digest.txt')), false);
  });

  test('POST a multipart form of two files into a new folder (parents=true): both placed and listed; the URL again is refused', async () => {
    const signed = await sign('plugins/new-pack', '&parents=true');
    const r = await form(signed.url, [
      ['a.yml', 'a: 1\n'],
      ['b ü.txt', 'bee\n'],
    ]);
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), {
      path: 'plugins/new-pack',
      status: 'uploaded',
      files: [
        { path: 'plugins/new-pack/a.yml', sha256: sha('a: 1\n'), size: 5 },
        { path: 'plugins/new-pack/b ü.txt', sha256: sha('bee\n'), size: 4 },
      ],
    });
    const l = await s.call('GET', `${S}/files?path=${q('plugins/new-pack')}`);
    // Should the listing fail, say what the cluster held then (its Pods and Jobs).
    if (l.status !== 200) {
      const jobs = (await batch.listNamespacedJob({ namespace: 'minecraft' })).items.map((j) => [j.metadata?.name, j.status?.conditions?.map((c) => c.type)]);
      assert.fail(`${l.status} ${l.text}; Jobs: ${JSON.stringify(jobs)}`);
    }
    assert.deepEqual(l.body.entries.map((e: { name: string }) => e.name).sort(), ['a.yml', 'b ü.txt']);
    const again = await form(signed.url, [['c.txt', 'c']]);
    assert.equal(again.status, 410);
    assert.equal(await codeOf(again), 'upload_url_used');
    assert.equal(existsSync(join(s.world, 'plugins', 'new-pack', 'c.txt')), false);
  });

  test('two uses of one URL at once: exactly one places its file', async () => {
    const signed = await sign('plugins/race.txt');
    const answers = await Promise.all(['one\n', 'two\n'].map((b) => put(signed.url, b)));
    const statuses = answers.map((a) => a.status).sort();
    assert.equal(statuses.filter((x) => x === 200).length, 1, String(statuses));
    // The loser is refused as a spent URL, or (when it came while the winner held the world) as busy; either way it placed nothing.
    const loser = answers.find((a) => a.status !== 200)!;
    assert.ok(['upload_url_used', 'maintenance_in_progress'].includes(await codeOf(loser)));
    const winner = answers.find((a) => a.status === 200)!;
    const body = (await winner.json()) as { sha256: string };
    assert.equal(sha(readFileSync(join(s.world, 'plugins', 'race.txt'))), body.sha256);
    const third = await put(signed.url, 'three\n');
    assert.equal(await codeOf(third), 'upload_url_used');
  });

  test('purpose-scoped: a download ticket opens no upload, an upload ticket no download', async () => {
    writeFileSync(join(s.world, 'plugins', 'dl.txt'), 'download me\n');
    const d = await s.call('POST', `${S}/files/download?path=${q('plugins/dl.txt')}`);
    assert.equal(d.status, 200, d.text);
    const dTicket = (d.body.url as string).split('/')[4]!;
    const asUpload = await put(`/api/v1/uploads/${dTicket}`, 'overwritten\n');
    assert.equal(asUpload.status, 404);
    assert.equal(await codeOf(asUpload), 'not_found');
    assert.equal(readFileSync(join(s.world, 'plugins', 'dl.txt'), 'utf8'), 'download me\n');
    const u = await sign('plugins/dl.txt', '&overwrite=true');
    const uTicket = u.url.split('/')[4]!;
    const asDownload = await use(`/api/v1/exports/${uTicket}/download`, { method: 'GET' });
    assert.equal(asDownload.status, 404);
    assert.equal(await codeOf(asDownload), 'not_found');
    // The upload ticket is still unspent, and does what it was signed for.
    assert.equal((await put(u.url, 'replaced\n')).status, 200);
    assert.equal(readFileSync(join(s.world, 'plugins', 'dl.txt'), 'utf8'), 'replaced\n');
  });

  test('hostile file names in a form are refused, nothing placed anywhere', async () => {
    mkdirSync(join(s.world, 'drop'), { recursive: true });
    for (const name of ['../x', 'a/b', '.felis-edit-0123456789ab', '..']) {
      const signed = await sign('drop');
      const boundary = 'b0undary';
      const body = `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${name}"\r\n\r\nevil\r\n--${boundary}--\r\n`;
      const r = await use(signed.url, { method: 'POST', body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
      assert.equal(r.status, 400, name);
      assert.equal(await codeOf(r), 'bad_path', name);
    }
    assert.deepEqual(readdirSync(join(s.world, 'drop')), []);
    assert.equal(existsSync(join(s.world, 'x')), false);
    assert.equal(existsSync(join(s.world, 'drop', 'a')), false);
  });

  test('a body over max_bytes is refused from its Content-Length, before any Job, and the URL stays good', async () => {
    const signed = await sign('plugins/big.bin');
    const u = new URL(signed.url, s.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'PUT', headers: { 'content-length': String(signed.max_bytes + 1) } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
        req.destroy();
      });
      req.on('error', reject);
      req.write(Buffer.alloc(1024));
    });
    assert.equal(status, 413);
    assert.equal((await put(signed.url, 'small\n')).status, 200);
  });

  test('a form without a files part, or not multipart at all, is 400 bad_request', async () => {
    const signed = await sign('plugins');
    const fd = new FormData();
    fd.append('file', new Blob(['x']), 'x.txt');
    const r = await use(signed.url, { method: 'POST', body: fd });
    assert.equal(r.status, 400);
    assert.equal(await codeOf(r), 'bad_request');
    const plain = await use((await sign('plugins')).url, { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } });
    assert.equal(plain.status, 400);
    assert.equal(existsSync(join(s.world, 'plugins', 'x.txt')), false);
  });
});

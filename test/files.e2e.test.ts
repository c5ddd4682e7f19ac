/**
 * The file routes end to end: HTTP → function → client-node → API server (embedded, or the real
 * one on the cluster tier; RBAC from knative/rbac.yaml) → Job → kubelet → the real Job program over
 * a real directory, and back.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { roleGrants } from './support/role.ts';
import { FUNCTION_USER, q, type Stack, startStack, TIER } from './support/stack.ts';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const write = (content: string, extra: object = {}) => ({ content: b64(content), content_sha256: sha(content), ...extra });

describe(`file routes through the ${TIER} cluster`, () => {
  let s: Stack;
  before(async () => {
    s = await startStack();
  });
  after(async () => {
    await s?.close();
  });

  test('write → read → rename → list → delete round trip', async () => {
    const w = await s.call('PUT', `/api/v1/servers/survival/file?path=${q('plugins/../hello.txt')}`, write('hello\n'));
    assert.equal(w.status, 200, w.text);
    assert.deepEqual(w.body, { path: 'plugins/../hello.txt', status: 'written', sha256: sha('hello\n') });
    assert.equal(w.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.ok(w.text.endsWith('}\n'));

    const r = await s.call('GET', '/api/v1/servers/survival/file?path=hello.txt');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { path: 'hello.txt', content: b64('hello\n'), sha256: sha('hello\n'), content_sha256: sha('hello\n') });

    const mv = await s.call('POST', '/api/v1/servers/survival/files/rename?path=hello.txt', { to: 'plugins/hi.txt' });
    assert.equal(mv.status, 200, mv.text);
    assert.deepEqual(mv.body, { path: 'hello.txt', to: 'plugins/hi.txt', status: 'renamed' });

    const l = await s.call('GET', '/api/v1/servers/survival/files?path=plugins');
    assert.equal(l.status, 200, l.text);
    const names = l.body.entries.map((e: { name: string }) => e.name).sort();
    assert.deepEqual(names, ['README.txt', 'hi.txt']);
    const hi = l.body.entries.find((e: { name: string }) => e.name === 'hi.txt');
    assert.equal(hi.size, 6);
    assert.equal(hi.is_dir, false);
    assert.match(hi.mod_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.equal(l.body.truncated, false);
    assert.ok(typeof l.body.free_bytes === 'number' && l.body.free_bytes > 0);

    const d = await s.call('DELETE', '/api/v1/servers/survival/file?path=plugins/hi.txt');
    assert.equal(d.status, 200, d.text);
    // The undo trash keeps it under this record (test/files-trash.e2e.test.ts restores one).
    assert.match(d.body.trash_id, /^[0-9a-f]{16}$/, d.text);
    assert.deepEqual(d.body, { path: 'plugins/hi.txt', status: 'deleted', trash_id: d.body.trash_id });
    assert.equal(existsSync(join(s.world, 'plugins/hi.txt')), false);
  });

  test('listing the root with an empty path; mkdir creates one folder', async () => {
    const root = await s.call('GET', '/api/v1/servers/survival/files');
    assert.equal(root.status, 200, root.text);
    assert.equal(root.body.path, '');
    const cfg = root.body.entries.find((e: { name: string }) => e.name === 'config');
    assert.equal(cfg.is_dir, true);
    const m = await s.call('POST', '/api/v1/servers/survival/files/mkdir?path=datapacks', undefined);
    assert.equal(m.status, 200, m.text);
    assert.deepEqual(m.body, { path: 'datapacks', status: 'created' });
    const again = await s.call('POST', '/api/v1/servers/survival/files/mkdir?path=datapacks');
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'file_exists');
    const orphan = await s.call('POST', '/api/v1/servers/survival/files/mkdir?path=nope/deeper');
    assert.equal(orphan.status, 404);
    assert.match(orphan.body.error.message, /folder nope does not exist/);
  });

  test('server.properties is redacted; its sha256 is of the disk bytes', async () => {
    const r = await s.call('GET', '/api/v1/servers/survival/file?path=server.properties');
    assert.equal(r.status, 200, r.text);
    const text = Buffer.from(r.body.content, 'base64').toString();
    assert.match(text, /^rcon\.password=<redacted by felis>$/m);
    assert.doesNotMatch(text, /hunter2/);
    assert.equal(r.body.sha256, sha(readFileSync(join(s.world, 'server.properties'))));
    assert.notEqual(r.body.sha256, r.body.content_sha256);
  });

  test('escapes and the forwarding secret are bad_path, in every spelling', async () => {
    mkdirSync(join(s.dataDir, 'outside'), { recursive: true });
    writeFileSync(join(s.dataDir, 'outside/secret.txt'), 'outside secret');
    symlinkSync('config/paper-global.yml', join(s.world, 'pg-link.yml'));
    symlinkSync(join(s.dataDir, 'outside'), join(s.world, 'out-link'));
    for (const p of ['../../etc/passwd', '/../etc/passwd', 'config/paper-global.yml', './config/paper-global.yml', 'config//paper-global.yml', 'pg-link.yml', 'out-link/secret.txt']) {
      const r = await s.call('GET', `/api/v1/servers/survival/file?path=${q(p)}`);
      assert.equal(r.status, 400, `${p}: ${r.text}`);
      assert.equal(r.body.error.code, 'bad_path', p);
      assert.doesNotMatch(r.text, /outside secret|not-for-your-eyes/);
    }
    // A leading / is the world folder (docs/routes.md, Paths): /etc/passwd is the world's etc/passwd.
    const rooted = await s.call('GET', `/api/v1/servers/survival/file?path=${q('/etc/passwd')}`);
    assert.equal(rooted.status, 404, rooted.text);
    assert.equal(rooted.body.error.message, 'etc/passwd does not exist');
    const w = await s.call('PUT', `/api/v1/servers/survival/file?path=${q('out-link/secret.txt')}`, write('pwned'));
    assert.equal(w.status, 400, w.text);
    assert.equal(readFileSync(join(s.dataDir, 'outside/secret.txt'), 'utf8'), 'outside secret');
    assert.equal(readlinkSync(join(s.world, 'out-link')), join(s.dataDir, 'outside'));
  });

  test('a stale expect_sha256 is 409 file_changed and leaves the file; the right one writes', async () => {
    await s.call('PUT', '/api/v1/servers/survival/file?path=ops.json', write('[]'));
    const stale = await s.call('PUT', '/api/v1/servers/survival/file?path=ops.json', write('["x"]', { expect_sha256: sha('something else') }));
    assert.equal(stale.status, 409, stale.text);
    assert.equal(stale.body.error.code, 'file_changed');
    assert.match(stale.body.error.request_id, /.+/);
    assert.equal(readFileSync(join(s.world, 'ops.json'), 'utf8'), '[]');
    const ok = await s.call('PUT', '/api/v1/servers/survival/file?path=ops.json', write('["x"]', { expect_sha256: sha('[]') }));
    assert.equal(ok.status, 200, ok.text);
    assert.equal(readFileSync(join(s.world, 'ops.json'), 'utf8'), '["x"]');
  });

  test('create_only on an existing file and rename onto an existing name are 409 file_exists', async () => {
    const c = await s.call('PUT', '/api/v1/servers/survival/file?path=eula.txt', write('eula=false\n', { create_only: true }));
    assert.equal(c.status, 409);
    assert.equal(c.body.error.code, 'file_exists');
    assert.equal(readFileSync(join(s.world, 'eula.txt'), 'utf8'), 'eula=true\n');
    const guarded = await s.call('POST', '/api/v1/servers/survival/files/rename?path=server.properties', { to: 'moved.properties' });
    assert.equal(guarded.status, 400, guarded.text);
    assert.match(guarded.body.error.message, /managed by felis/);
    const r2 = await s.call('POST', '/api/v1/servers/survival/files/rename?path=eula.txt', { to: 'plugins/README.txt' });
    assert.equal(r2.status, 409);
    assert.equal(r2.body.error.code, 'file_exists');
  });

  test('missing files are 404 not_found with the Job explanation', async () => {
    const r = await s.call('GET', '/api/v1/servers/survival/file?path=nope.yml');
    assert.equal(r.status, 404);
    assert.deepEqual(Object.keys(r.body.error).sort(), ['code', 'message', 'request_id']);
    assert.equal(r.body.error.code, 'not_found');
    assert.equal(r.body.error.message, 'nope.yml does not exist');
    const d = await s.call('DELETE', '/api/v1/servers/survival/file?path=nope.yml');
    assert.equal(d.status, 404);
    // A write makes no folders: one into a missing folder names that folder.
    const content = Buffer.from('x');
    const w = await s.call('PUT', '/api/v1/servers/survival/file?path=nope/deeper/x.yml', { content: content.toString('base64'), content_sha256: sha(content) });
    assert.equal(w.status, 404, JSON.stringify(w.body));
    assert.equal(w.body.error.message, 'folder nope/deeper does not exist');
  });

  test('a file over 1 MiB is 413 too_large from the Job; over 256 KiB of content is refused before any Job', async () => {
    writeFileSync(join(s.world, 'big.bin'), Buffer.alloc((1 << 20) + 1));
    const r = await s.call('GET', '/api/v1/servers/survival/file?path=big.bin');
    assert.equal(r.status, 413);
    assert.equal(r.body.error.code, 'too_large');
    s.cluster.resetCounts();
    const big = Buffer.alloc((256 << 10) + 1, 1);
    const w = await s.call('PUT', '/api/v1/servers/survival/file?path=x.bin', { content: big.toString('base64'), content_sha256: sha(big) });
    assert.equal(w.status, 413);
    assert.equal(s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0, 0);
  });

  test('write digest refusals create no Job', async () => {
    s.cluster.resetCounts();
    const cases: [object, string][] = [
      [{ content: b64('a') }, 'digest_required'],
      [{ content: b64('a'), content_sha256: sha('a').toUpperCase() }, 'bad_digest'],
      [{ content: b64('a'), content_sha256: sha('b') }, 'digest_mismatch'],
      [{ content_sha256: sha('a') }, 'bad_request'],
      [{ content: b64('a'), content_sha256: sha('a'), extra: 1 }, 'bad_request'],
    ];
    for (const [body, code] of cases) {
      const r = await s.call('PUT', '/api/v1/servers/survival/file?path=a.txt', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, code);
    }
    assert.equal((await s.call('PUT', '/api/v1/servers/survival/file?path=a.txt', '{')).body.error.code, 'bad_request');
    assert.equal((await s.call('PUT', '/api/v1/servers/survival/file?path=a.txt', '')).body.error.code, 'bad_request');
    assert.equal(s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0, 0);
  });

  test('request checks: bad_name, missing path, names over 255 bytes, NUL, missing to, auth', async () => {
    assert.equal((await s.call('GET', '/api/v1/servers/X/files')).body.error.code, 'bad_name');
    assert.equal((await s.call('GET', '/api/v1/servers/-ab/files')).body.error.code, 'bad_name');
    const np = await s.call('GET', '/api/v1/servers/survival/file');
    assert.equal(np.status, 400);
    assert.equal(np.body.error.code, 'bad_request');
    assert.equal((await s.call('GET', `/api/v1/servers/survival/file?path=${'a'.repeat(256)}`)).body.error.code, 'bad_path');
    assert.equal((await s.call('GET', `/api/v1/servers/survival/file?path=a%00b`)).body.error.code, 'bad_path');
    const nt = await s.call('POST', '/api/v1/servers/survival/files/rename?path=eula.txt', { to: '' });
    assert.equal(nt.body.error.code, 'bad_request');
    const un = await s.call('GET', '/api/v1/servers/survival/files', undefined, { authorization: 'Bearer wrong' });
    assert.equal(un.status, 401);
    assert.equal(un.body.error.code, 'unauthorized');
    const none = await fetch(s.url + '/api/v1/servers/survival/files');
    assert.equal(none.status, 401);
    const health = await fetch(s.url + '/healthz');
    assert.equal(health.status, 200);
    const nf = await s.call('GET', '/api/v1/nothing-here');
    assert.equal(nf.status, 404);
    assert.equal(nf.body.error.code, 'not_found');
  });

  test('every call the functions made stayed inside the Role', async () => {
    const granted = roleGrants();
    const used = Object.keys(s.cluster.counts(FUNCTION_USER)).sort();
    assert.ok(used.length > 0);
    for (const k of used) assert.ok(granted.has(k), `call outside the Role: ${k}`);
  });
});

/**
 * `FELIS_AUTH_MODE=kubernetes npm start` as a person would try it: the printed tokens work as the
 * printed lines say — the viewer lists and is refused a write with 403 naming the permission, the
 * editor of `survival` writes, and the audit line names each user. The service runs in its own
 * process group over a temporary FELIS_DATA, is stopped with SIGTERM, and every wait is bounded.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { jsonCall } from '../lib/testing/json-call.ts';
import { checkedFetch, loadChecker } from './support/openapi-check.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// Every answer of `npm start` is held to docs/openapi.json (checked on this side: it runs in another process).
const checked = checkedFetch(loadChecker());
const data = mkdtempSync(join(tmpdir(), 'felis-start-k8s-'));
const proc = spawn(process.execPath, ['scripts/start.ts'], {
  cwd: ROOT,
  detached: true,
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', FELIS_DATA: data, PORT: '0', FELIS_AUTH_MODE: 'kubernetes', LOG_LEVEL: 'info' },
});
let out = '';
proc.stdout!.on('data', (b) => (out += b));
proc.stderr!.on('data', (b) => (out += b));
const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));

after(async () => {
  try {
    process.kill(-proc.pid!, 'SIGTERM');
  } catch {
    // gone already
  }
  const killer = setTimeout(() => {
    try {
      process.kill(-proc.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  }, 15_000);
  await exited;
  clearTimeout(killer);
  rmSync(data, { recursive: true, force: true });
});

async function started(): Promise<{ url: string; alice: string; bob: string }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const url = /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    const alice = /alice \(editor of survival only\): +(\S+)/.exec(out)?.[1];
    const bob = /bob +\(viewer of every server\): +(\S+)/.exec(out)?.[1];
    if (url && alice && bob) return { url, alice, bob };
    if (proc.exitCode !== null) throw new Error(`npm start exited before serving:\n${out}`);
    if (Date.now() > deadline) throw new Error(`npm start did not serve in 60 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const write = (text: string) => ({ content: Buffer.from(text).toString('base64'), content_sha256: createHash('sha256').update(text).digest('hex') });

test('npm start in kubernetes mode: bob views, is refused a write naming the permission; alice writes; audits name them', async () => {
  const { url, alice, bob } = await started();
  const as = (token: string, method: string, path: string, body?: unknown) => jsonCall((p, init) => checked.fetch(url + p, init), token, method, path, body);
  const list = await as(bob, 'GET', '/api/v1/servers/survival/files?path=');
  assert.equal(list.status, 200, list.text);
  const refused = await as(bob, 'PUT', '/api/v1/servers/survival/file?path=hello.txt', write('hello\n'));
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.body.error.message, 'bob lacks the permission: update minecraftservers/files survival');
  const written = await as(alice, 'PUT', '/api/v1/servers/survival/file?path=hello.txt', write('hello\n'));
  assert.equal(written.status, 200, written.text);
  assert.equal((await as(alice, 'DELETE', '/api/v1/servers/survival/lock')).status, 403);
  assert.equal((await as('the-shared-token-is-not-used', 'GET', '/api/v1/servers/survival/files?path=')).status, 401);
  const audits = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.audit === true);
  assert.deepEqual(
    audits.map((a) => [a.action, a.actor, a.target]),
    [['file.write', 'alice', 'survival:hello.txt']],
  );
  // Every line of alice's request names her; bob's refusal is logged under his name.
  assert.ok(out.includes('"actor":"bob"'), 'bob in the log');
});

// Last of the hooks (they run in order): the processes above are stopped even when this throws.
after(() => checked.assertClean());

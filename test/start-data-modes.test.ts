/**
 * `npm start` keeps FELIS_DATA to its user: the directory 0700 and its state, job key and admin
 * kubeconfig 0600, also when an earlier run left them readable (0755 / 0644). The service runs in
 * its own process group over a temporary FELIS_DATA, is stopped with SIGTERM, and every wait is bounded.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const base = mkdtempSync(join(tmpdir(), 'felis-start-modes-'));
const data = join(base, 'data');
const mode = (p: string) => lstatSync(p).mode & 0o777;

after(() => rmSync(base, { recursive: true, force: true }));

/** Runs `npm start` over `data` until it serves, then stops it. */
async function startAndStop(): Promise<void> {
  const proc = spawn(process.execPath, ['scripts/start.ts'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', FELIS_DATA: data, PORT: '0', LOG_LEVEL: 'warn' },
  });
  let out = '';
  proc.stdout!.on('data', (b) => (out += b));
  proc.stderr!.on('data', (b) => (out += b));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  try {
    const deadline = Date.now() + 60_000;
    while (!/serving on http:\/\/127\.0\.0\.1:\d+/.test(out)) {
      if (proc.exitCode !== null) throw new Error(`npm start exited before serving:\n${out}`);
      if (Date.now() > deadline) throw new Error(`npm start did not serve in 60 s:\n${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
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
  }
}

function assertPrivate(): void {
  assert.equal(mode(data), 0o700, 'FELIS_DATA');
  for (const f of ['cluster.sqlite', 'job-key', 'admin.kubeconfig', 'ca.crt', 'ca.key']) assert.equal(mode(join(data, f)), 0o600, f);
  for (const f of ['cluster.sqlite-wal', 'cluster.sqlite-shm']) if (existsSync(join(data, f))) assert.equal(mode(join(data, f)), 0o600, f);
}

test('npm start creates FELIS_DATA 0700 and its private files 0600, and tightens them when they were left readable', async () => {
  await startAndStop();
  assertPrivate();
  const ca = ['ca.crt', 'ca.key'].map((f) => readFileSync(join(data, f), 'utf8'));
  assert.match(ca[0]!, /^-----BEGIN CERTIFICATE-----/);
  assert.match(ca[1]!, /^-----BEGIN PRIVATE KEY-----/);
  chmodSync(data, 0o755);
  for (const f of ['cluster.sqlite', 'job-key', 'admin.kubeconfig', 'ca.crt', 'ca.key']) chmodSync(join(data, f), 0o644);
  // A crashed run's WAL, readable to all.
  writeFileSync(join(data, 'cluster.sqlite-wal'), '', { mode: 0o644 });
  chmodSync(join(data, 'cluster.sqlite-wal'), 0o644);
  await startAndStop();
  assertPrivate();
  // The restart kept the CA (and its key) that the first start made.
  assert.deepEqual(
    ['ca.crt', 'ca.key'].map((f) => readFileSync(join(data, f), 'utf8')),
    ca,
  );
  const kubeconfig = readFileSync(join(data, 'admin.kubeconfig'), 'utf8');
  assert.ok(kubeconfig.includes(`certificate-authority-data: ${Buffer.from(ca[0]!).toString('base64')}`), 'admin.kubeconfig carries the CA');
  assert.match(kubeconfig, /server: https:\/\/127\.0\.0\.1:\d+/);
});

test('a FELIS_DATA that exists with files 0644 before the first start is tightened too', async () => {
  rmSync(data, { recursive: true, force: true });
  mkdirSync(data, { mode: 0o755 });
  chmodSync(data, 0o755);
  writeFileSync(join(data, 'job-key'), Buffer.alloc(32, 7), { mode: 0o644 });
  chmodSync(join(data, 'job-key'), 0o644);
  await startAndStop();
  assertPrivate();
});

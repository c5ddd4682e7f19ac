import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { PersistentState } from './persist.ts';
import { PRIVATE_FILES, privateDataDir } from './private-files.ts';

const mode = (p: string) => fs.lstatSync(p).mode & 0o777;
function tmp(): string {
  const base = fs.mkdtempSync(join(os.tmpdir(), 'felis-private-'));
  test.after(() => fs.rmSync(base, { recursive: true, force: true }));
  return base;
}

test('a fresh data directory is 0700, the database and its WAL 0600, whatever the umask', () => {
  const dir = join(tmp(), 'data', 'nested');
  const old = process.umask(0o002);
  try {
    const s = PersistentState.open(dir);
    try {
      assert.equal(mode(dir), 0o700);
      for (const f of ['cluster.sqlite', 'cluster.sqlite-wal']) {
        assert.ok(fs.existsSync(join(dir, f)), f);
        assert.equal(mode(join(dir, f)), 0o600, f);
      }
      // In exclusive locking mode SQLite keeps the WAL index in memory: no -shm file.
      if (fs.existsSync(join(dir, 'cluster.sqlite-shm'))) assert.equal(mode(join(dir, 'cluster.sqlite-shm')), 0o600);
    } finally {
      s.close();
    }
  } finally {
    process.umask(old);
  }
});

test('files left readable by an earlier run are made 0600 again, and the directory 0700', () => {
  const dir = join(tmp(), 'data');
  PersistentState.open(dir).close();
  fs.writeFileSync(join(dir, 'job-key'), Buffer.alloc(32, 1));
  fs.writeFileSync(join(dir, 'admin.kubeconfig'), 'apiVersion: v1\n');
  // SQLite removes the WAL and shared memory at a clean close; a crashed run leaves them behind.
  fs.writeFileSync(join(dir, 'cluster.sqlite-wal'), '');
  fs.writeFileSync(join(dir, 'cluster.sqlite-shm'), '');
  for (const f of PRIVATE_FILES) if (fs.existsSync(join(dir, f))) fs.chmodSync(join(dir, f), 0o644);
  fs.chmodSync(dir, 0o755);
  privateDataDir(dir);
  assert.equal(mode(dir), 0o700);
  for (const f of ['cluster.sqlite', 'cluster.sqlite-wal', 'cluster.sqlite-shm', 'job-key', 'admin.kubeconfig']) assert.equal(mode(join(dir, f)), 0o600, f);
  // Opening the state does the same on its own.
  fs.chmodSync(join(dir, 'cluster.sqlite'), 0o644);
  fs.chmodSync(dir, 0o755);
  PersistentState.open(dir).close();
  assert.equal(mode(dir), 0o700);
  assert.equal(mode(join(dir, 'cluster.sqlite')), 0o600);
});

test('a link in place of a private file is refused, and what it points to keeps its mode', () => {
  const base = tmp();
  const dir = join(base, 'data');
  fs.mkdirSync(dir);
  const elsewhere = join(base, 'elsewhere.txt');
  fs.writeFileSync(elsewhere, 'not ours', { mode: 0o644 });
  fs.symlinkSync(elsewhere, join(dir, 'cluster.sqlite'));
  assert.throws(() => PersistentState.open(dir), /cluster\.sqlite is a symbolic link/);
  assert.equal(mode(elsewhere), 0o644);
  assert.equal(fs.readFileSync(elsewhere, 'utf8'), 'not ours');
  const linked = join(base, 'linked-data');
  fs.symlinkSync(dir, linked);
  assert.throws(() => privateDataDir(linked), /not a directory/);
});

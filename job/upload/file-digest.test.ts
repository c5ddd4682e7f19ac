import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileDigest, hashPrefix, stopDigestThread } from './file-digest.ts';

const dir = fs.mkdtempSync(join(tmpdir(), 'felis-digest-'));
after(async () => {
  await stopDigestThread();
  fs.rmSync(dir, { recursive: true, force: true });
});

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const open = (path: string) => fs.openSync(path, 'r');

test('the digest of a file extended range by range is the SHA-256 of its first bytes, as often as asked', async () => {
  const bytes = randomBytes((3 << 20) + 12_345);
  const path = join(dir, 'a');
  fs.writeFileSync(path, bytes);
  const d = new FileDigest();
  assert.equal(await d.digest(), sha(Buffer.alloc(0)));
  for (const to of [1, (1 << 20) + 7, 3 << 20]) d.extend(open(path), to);
  assert.equal(d.length, 3 << 20);
  assert.equal(await d.digest(), sha(bytes.subarray(0, 3 << 20)));
  assert.equal(await d.digest(), sha(bytes.subarray(0, 3 << 20)));
  d.extend(open(path), bytes.length);
  assert.equal(await d.digest(), sha(bytes));
  // Two digests in the same thread keep apart.
  const other = new FileDigest();
  other.extend(open(path), 10);
  assert.equal(await other.digest(), sha(bytes.subarray(0, 10)));
  assert.equal(await d.digest(), sha(bytes));
});

test('the thread closes the descriptors it is given', async () => {
  const path = join(dir, 'b');
  fs.writeFileSync(path, 'hello');
  const d = new FileDigest();
  const fd = open(path);
  d.extend(fd, 5);
  await d.digest();
  assert.throws(() => fs.fstatSync(fd), { code: 'EBADF' });
});

test('a file shorter than the bytes asked for fails the digest, and hashPrefix says so through its own error', async () => {
  const path = join(dir, 'c');
  fs.writeFileSync(path, 'short');
  const d = new FileDigest();
  d.extend(open(path), 100);
  await assert.rejects(d.digest(), /ended before byte 100/);
  const fd = open(path);
  try {
    assert.throws(() => hashPrefix(fd, 100, () => new Error('too short')), /too short/);
    assert.equal(hashPrefix(fd, 5, () => new Error('too short')), sha(Buffer.from('short')));
  } finally {
    fs.closeSync(fd);
  }
});

test('a lost thread fails only the digests it held; the next digest gets a new thread', async () => {
  const path = join(dir, 'd');
  fs.writeFileSync(path, 'abcdef');
  const d = new FileDigest();
  d.extend(open(path), 3);
  await stopDigestThread();
  await assert.rejects(d.digest());
  d.extend(open(path), 6); // closed at once, not leaked
  const fresh = new FileDigest();
  fresh.extend(open(path), 6);
  assert.equal(await fresh.digest(), sha(Buffer.from('abcdef')));
});

test('the thread never keeps a process alive: one that handed it bytes and asked nothing more ends by itself', () => {
  const path = join(dir, 'e');
  fs.writeFileSync(path, 'x'.repeat(1000));
  const mod = fileURLToPath(new URL('./file-digest.ts', import.meta.url));
  const script = `
    import fs from 'node:fs';
    import { FileDigest } from ${JSON.stringify(mod)};
    const a = new FileDigest();
    a.extend(fs.openSync(${JSON.stringify(path)}, 'r'), 1000);
    console.log('handed over');
  `;
  const t0 = performance.now();
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 5_000, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  assert.equal(out.trim(), 'handed over');
  assert.ok(performance.now() - t0 < 5_000);
});

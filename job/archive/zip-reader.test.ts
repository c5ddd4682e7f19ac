import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { type Forged, forgeZip } from './forge.test-kit.ts';
import { ZipPass } from './zip-reader.ts';

test('after a large entry has streamed, the pass still reads the entries behind it, and closing it closes only its own descriptors', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-zr-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const big = randomBytes(1 << 20);
  const small: Buffer[] = Array.from({ length: 3000 }, () => randomBytes(200));
  const entries: Forged[] = [{ name: 'big.bin', data: big }, ...small.map((d, i) => ({ name: `s${i}`, data: d, method: 0 as const }))];
  fs.writeFileSync(path.join(dir, 'a.zip'), forgeZip(entries));
  const fd = fs.openSync(path.join(dir, 'a.zip'), 'r');
  const before = fs.readdirSync('/proc/self/fd').length;
  const pass = await ZipPass.open(fd);
  const first = (await pass.next())!;
  assert.equal(await pass.readSmall(first), null); // too large for one read: streamed
  const chunks: Buffer[] = [];
  for await (const c of await pass.openData(first)) chunks.push(c as Buffer);
  assert.deepEqual(Buffer.concat(chunks), big);
  for (let i = 0; i < small.length; i++) {
    const e = (await pass.next())!;
    assert.deepEqual(await pass.readSmall(e), small[i], `entry ${i}`);
  }
  assert.equal(await pass.next(), null);
  const errors: unknown[] = [];
  process.on('uncaughtException', (e) => errors.push(e));
  pass.close();
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(errors, []);
  assert.equal(fs.readdirSync('/proc/self/fd').length, before);
  fs.fstatSync(fd); // the caller's descriptor is still open
  fs.closeSync(fd);
});

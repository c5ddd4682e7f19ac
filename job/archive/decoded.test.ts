import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { compress } from './codec.test-kit.ts';
import { openDecoded } from './decoded.ts';

for (const codec of ['gzip', 'zstd'] as const) {
  test(`${codec}: the decoded bytes come out whole, and a consumer that stops early stops the reading`, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-decoded-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const data = randomBytes(8 << 20); // incompressible: the file is as large as its data
    const file = path.join(dir, 'f');
    fs.writeFileSync(file, await compress(codec, data));
    const fd = fs.openSync(file, 'r');
    t.after(() => fs.closeSync(fd));

    const whole: Buffer[] = [];
    for await (const piece of await openDecoded(codec, fd)) whole.push(piece as Buffer);
    assert.ok(Buffer.concat(whole).equals(data));

    let read = 0;
    const stream = await openDecoded(codec, fd, (n) => (read += n));
    for await (const _ of stream) break;
    await new Promise((r) => setTimeout(r, 200));
    const size = fs.fstatSync(fd).size;
    assert.ok(read < size / 4, `read ${read} of ${size} bytes after the consumer stopped`);
  });
}

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import { jobToken, tokenDigest } from '../../lib/protocol/job-token.ts';
import { openContext } from '../op-kit/context.ts';
import { makeWorld, sha256, snapshot } from '../testing/world.ts';
import { fileNameRefusal } from '../upload/form.ts';
import { landUpload } from '../upload/land.ts';
import { type Receiving, startReceiving } from './receive.ts';

const KEY = Buffer.alloc(32, 9);
const TOKEN = jobToken(KEY, 'files-survival-u0002');

async function receiver(root: string): Promise<Receiving> {
  return startReceiving({
    host: '127.0.0.1',
    port: 0,
    tokenSha256: tokenDigest(TOKEN),
    idleMs: 60_000,
    lifetimeMs: 60_000,
    land: async (req, body) => {
      const ctx = openContext(root);
      try {
        return await landUpload(ctx, req, body);
      } finally {
        ctx.root.close();
      }
    },
  });
}

/** The bytes and Content-Type of a form as fetch would send it. */
async function encoded(parts: [string, string | Blob, string?][]): Promise<{ body: Buffer; type: string }> {
  const fd = new FormData();
  for (const [k, v, name] of parts) {
    if (typeof v === 'string' && name === undefined) fd.append(k, v);
    else fd.append(k, typeof v === 'string' ? new Blob([v]) : v, name);
  }
  const r = new Request('http://x/', { method: 'POST', body: fd });
  return { body: Buffer.from(await r.arrayBuffer()), type: r.headers.get('content-type')! };
}

/** A raw multipart body with one file part named as given (FormData would escape some names). */
function rawForm(filename: string, content: string): { body: Buffer; type: string } {
  const b = 'XyZbOuNdArY';
  const body = Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="files"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n${content}\r\n--${b}--\r\n`);
  return { body, type: `multipart/form-data; boundary=${b}` };
}

function post(r: Receiving, query: string, f: { body: Buffer; type: string }, o: { cutAfter?: number } = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: r.address.address,
        port: r.address.port,
        path: `/form?${query}`,
        method: 'POST',
        agent: false,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': f.type, 'content-length': String(f.body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, unknown> }));
      },
    );
    req.on('error', o.cutAfter === undefined ? reject : () => resolve({ status: 0, json: {} }));
    if (o.cutAfter === undefined) req.end(f.body);
    else {
      req.write(f.body.subarray(0, o.cutAfter));
      setTimeout(() => req.destroy(), 100);
    }
  });
}

test('a form of two files places both in the folder, each hashed; the answer lists them', async () => {
  const w = makeWorld();
  const r = await receiver(w.root);
  const f = await encoded([
    ['files', 'one\n', 'a.txt'],
    ['files', 'two two\n', 'b.txt'],
  ]);
  const a = await post(r, 'path=config', f);
  assert.equal(a.status, 200);
  assert.deepEqual(a.json, {
    files: [
      { path: 'config/a.txt', sha256: sha256('one\n'), size: 4 },
      { path: 'config/b.txt', sha256: sha256('two two\n'), size: 8 },
    ],
  });
  assert.equal(fs.readFileSync(path.join(w.root, 'config', 'b.txt'), 'utf8'), 'two two\n');
  r.stop();
  await r.stopped;
});

test('the root folder takes a form, and parents=true makes a missing folder', async () => {
  const w = makeWorld();
  const r = await receiver(w.root);
  assert.equal((await post(r, 'path=.', await encoded([['files', 'x', 'root.txt']]))).status, 200);
  assert.equal(fs.readFileSync(path.join(w.root, 'root.txt'), 'utf8'), 'x');
  const a = await post(r, 'path=new%2Fdeep&parents=true', await encoded([['files', 'y', 'n.txt']]));
  assert.deepEqual(a.json.files, [{ path: 'new/deep/n.txt', sha256: sha256('y'), size: 1 }]);
  r.stop();
  await r.stopped;
});

test('hostile file names are refused before a byte is placed, never cleaned into another name', async () => {
  const w = makeWorld();
  const r = await receiver(w.root);
  const before = snapshot(w.root);
  for (const name of ['../x', 'a/b', '.felis-edit-0123456789ab', '..', 'bad\u0001name']) {
    const a = await post(r, 'path=config', rawForm(name, 'evil'));
    assert.equal(a.status, 200, name);
    assert.deepEqual(a.json.files, [], name);
    assert.equal((a.json.refused as { code: string }).code, 'bad_path', name);
  }
  assert.deepEqual(snapshot(w.root), before);
  assert.equal(fs.existsSync(path.join(w.base, 'x')), false);
  r.stop();
  await r.stopped;
});

test('a part not named files, a plain field, or no part at all stops the form as such', async () => {
  const w = makeWorld();
  const r = await receiver(w.root);
  for (const parts of [[['file', 'x', 'a.txt']], [['files', 'just text']], [['note', 'hi']]] as [string, string, string?][][]) {
    const a = await post(r, 'path=config', await encoded(parts));
    assert.equal((a.json.refused as { code: string }).code, 'form', JSON.stringify(parts));
  }
  assert.equal(fs.existsSync(path.join(w.root, 'config', 'a.txt')), false);
  r.stop();
  await r.stopped;
});

test('a refused part stops the form: the files before it stay, the ones after are not placed', async () => {
  const w = makeWorld();
  const r = await receiver(w.root);
  const f = await encoded([
    ['files', 'first', 'first.txt'],
    ['files', 'clobber', 'paper.yml'],
    ['files', 'third', 'third.txt'],
  ]);
  const a = await post(r, 'path=config', f);
  assert.deepEqual(a.json.files, [{ path: 'config/first.txt', sha256: sha256('first'), size: 5 }]);
  assert.equal((a.json.refused as { code: string }).code, 'exists');
  assert.equal(fs.readFileSync(path.join(w.root, 'config', 'paper.yml'), 'utf8'), 'paper: true\n');
  assert.equal(fs.existsSync(path.join(w.root, 'config', 'third.txt')), false);
  // overwrite=true replaces it.
  const b = await post(r, 'path=config&overwrite=true', await encoded([['files', 'new', 'paper.yml']]));
  assert.equal(b.status, 200);
  assert.equal(fs.readFileSync(path.join(w.root, 'config', 'paper.yml'), 'utf8'), 'new');
  r.stop();
  await r.stopped;
});

test('a form broken off mid-part leaves no working file and the part unplaced', async () => {
  const w = makeWorld();
  const r = await receiver(w.root);
  const f = await encoded([['files', 'z'.repeat(200_000), 'big.bin']]);
  await post(r, 'path=config', f, { cutAfter: 100_000 });
  for (let i = 0; i < 50 && fs.readdirSync(path.join(w.root, 'config')).some((n) => n.startsWith('.felis-edit-')); i++) await new Promise((s) => setTimeout(s, 20));
  assert.deepEqual(fs.readdirSync(path.join(w.root, 'config')).sort(), ['paper-global.yml', 'paper.yml']);
  r.stop();
  await r.stopped;
});

test('the file name rule: one plain name only', () => {
  assert.equal(fileNameRefusal('ok.txt'), undefined);
  assert.equal(fileNameRefusal('spaces and ünïcode.txt'), undefined);
  for (const bad of [undefined, '', '.', '..', '../x', 'a/b', '/abs', '.felis-edit-abcdefabcdef', '.felis-edit-undo', 'x\u0000y', 'a\u202eb', 'n'.repeat(256)])
    assert.notEqual(fileNameRefusal(bad), undefined, JSON.stringify(bad));
});

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { test } from 'node:test';
import zlib, { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { compressorFor, TarSink } from '../../../job/archive/tar-pack.ts';
import { ZipPass } from '../../../job/archive/zip-reader.ts';
import { openContext } from '../../../job/op-kit/context.ts';
import type { OpCall, OpRequestOf } from '../../../job/runtime/types.ts';
import { LEDGER_DIR } from '../../../job/runtime/withheld.ts';
import { makeWorld, PROPS, SECRET_TEXT, type World } from '../../../job/testing/world.ts';
import { PACK_FORMATS, type PackFormat } from '../../../lib/files/pack-names.ts';
import { compress } from './compress.ts';

interface Got {
  dir: boolean;
  mode: number;
  mtime: number;
  data: Buffer;
}

/** Every entry of an archive, read back with tar-stream over zlib or liblzma, or the repo's zip reader. */
async function readBack(file: string, format: PackFormat): Promise<Map<string, Got>> {
  const out = new Map<string, Got>();
  if (format === 'zip') {
    const fd = fs.openSync(file, 'r');
    const pass = await ZipPass.open(fd);
    try {
      for (let e = await pass.next(); e; e = await pass.next()) {
        const name = e.rawName.toString('utf8');
        const parts: Buffer[] = [];
        const small = pass.readSmall(e);
        if (small) parts.push(small);
        else for await (const c of await pass.openData(e)) parts.push(c as Buffer);
        const mode = e.externalAttributes >>> 16;
        out.set(name.replace(/\/$/, ''), { dir: name.endsWith('/'), mode: mode & 0o777, mtime: 0, data: Buffer.concat(parts) });
      }
    } finally {
      pass.close();
      fs.closeSync(fd);
    }
    return out;
  }
  const raw = fs.readFileSync(file);
  let plain: Buffer;
  if (format === 'tar.gz') plain = zlib.gunzipSync(raw);
  else if (format === 'tar.zst') plain = zlib.zstdDecompressSync(raw);
  else {
    await compressorFor('tar.xz'); // loads liblzma's module
    const lzma = await import('node-liblzma/wasm');
    plain = Buffer.from(await lzma.unxzAsync(raw));
  }
  const ex = tar.extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on('entry', (h, stream, next) => {
      const parts: Buffer[] = [];
      stream.on('data', (c: unknown) => parts.push(c as Buffer));
      stream.on('end', () => {
        out.set(h.name.replace(/\/$/, ''), { dir: h.type === 'directory', mode: h.mode ?? 0, mtime: h.mtime!.getTime(), data: Buffer.concat(parts) });
        next();
      });
    });
    ex.on('finish', resolve);
    ex.on('error', reject);
  });
  Readable.from([plain]).pipe(ex as unknown as NodeJS.WritableStream);
  await done;
  return out;
}

function world(): World {
  const w = makeWorld();
  fs.mkdirSync(w.p('plugins/Essentials/userdata'), { recursive: true });
  fs.mkdirSync(w.p('plugins/empty'));
  fs.writeFileSync(w.p('plugins/Essentials/config.yml'), 'a: 1\n', { mode: 0o640 });
  fs.writeFileSync(w.p('plugins/Essentials/userdata/big.bin'), Buffer.alloc(700_000, 3));
  const long = `${'ü'.repeat(60)}-${'n'.repeat(90)}.txt`; // non-ASCII and past ustar's 100 bytes: pax
  fs.writeFileSync(w.p(`plugins/Essentials/${long}`), 'long\n');
  fs.writeFileSync(w.p('plugins/ViaVersion.jar'), Buffer.from([0x50, 0x4b, 3, 4, 9, 9]), { mode: 0o755 });
  fs.utimesSync(w.p('plugins/ViaVersion.jar'), new Date('2020-05-06T07:08:09Z'), new Date('2020-05-06T07:08:09Z'));
  fs.writeFileSync(w.p('plugins/not-chosen.txt'), 'left\n');
  return w;
}

const EXPECTED_FILES = ['Essentials/config.yml', 'Essentials/userdata/big.bin', 'ViaVersion.jar'];

function req(paths: string[], format: string, to?: string, folder = 'plugins'): Omit<OpRequestOf<'compress'>, 'worldsRoot'> {
  return { op: 'compress', path: folder, batch: { paths }, format, ...(to !== undefined ? { to } : {}) };
}

function workingLeft(w: World, dir: string): string[] {
  return fs.readdirSync(w.p(dir)).filter((n) => n.startsWith('.felis') && n !== LEDGER_DIR);
}

for (const format of PACK_FORMATS) {
  test(`${format}: a selection round-trips byte for byte, with modes (and tar mtimes), under each source's base name`, async () => {
    const w = world();
    const name = `sel.${format}`;
    const lines: string[] = [];
    const r = await w.run(req(['plugins/Essentials', 'plugins/ViaVersion.jar', './plugins/empty/'], format, name), { progress: (l) => lines.push(l) });
    assert.equal(r.code, undefined, JSON.stringify(r));
    assert.equal(r.files, 4);
    const file = w.p(`plugins/${name}`);
    assert.equal(r.bytes, fs.statSync(file).size);
    const total =
      fs
        .readdirSync(w.p('plugins/Essentials'), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .reduce((n, e) => n + fs.statSync(path.join(e.parentPath, e.name)).size, 0) + 6;
    assert.deepEqual(JSON.parse(lines.at(-1)!.replace(/^FELIS-FILES-PROGRESS: /, '')), { done: total, total });
    const got = await readBack(file, format);
    const long = fs.readdirSync(w.p('plugins/Essentials')).find((n) => n.endsWith('.txt'))!;
    assert.deepEqual([...got.keys()].sort(), ['Essentials', `Essentials/${long}`, 'Essentials/config.yml', 'Essentials/userdata', 'Essentials/userdata/big.bin', 'ViaVersion.jar', 'empty'].sort());
    for (const f of [...EXPECTED_FILES, `Essentials/${long}`]) {
      const disk = w.p(`plugins/${f}`);
      assert.ok(got.get(f)!.data.equals(fs.readFileSync(disk)), f);
      assert.equal(got.get(f)!.mode & 0o777, fs.statSync(disk).mode & 0o777, f);
    }
    assert.ok(got.get('empty')!.dir && got.get('Essentials/userdata')!.dir);
    if (format !== 'zip') assert.equal(got.get('ViaVersion.jar')!.mtime, Date.parse('2020-05-06T07:08:09Z'));
    assert.deepEqual(workingLeft(w, 'plugins'), []);
    assert.equal(fs.statSync(file).mode & 0o777, 0o644);
  });
}

test('tar.zst is what tar --zstd reads back, and the default name is archive-<UTC time>.<ending>', async (t) => {
  if (!hasTool('zstd')) return t.skip('zstd is not installed');
  const w = world();
  const before = Date.now();
  const r = await w.run(req(['plugins/Essentials', 'plugins/ViaVersion.jar'], 'tar.zst'));
  assert.equal(r.code, undefined, JSON.stringify(r));
  const made = fs.readdirSync(w.p('plugins')).filter((n) => n.startsWith('archive-'));
  assert.equal(made.length, 1);
  assert.match(made[0]!, /^archive-\d{4}-\d\d-\d\dT\d{6}\.tar\.zst$/);
  const stamp = made[0]!.slice(8, 25);
  const at = Date.parse(`${stamp.slice(0, 13)}:${stamp.slice(13, 15)}:${stamp.slice(15, 17)}Z`);
  assert.ok(at >= Math.floor(before / 1000) * 1000 - 1000 && at <= Date.now(), made[0]);
  const x = path.join(w.outside, 'x');
  fs.mkdirSync(x);
  execFileSync('tar', ['--zstd', '-xf', w.p(`plugins/${made[0]}`), '-C', x]);
  assert.ok(fs.readFileSync(path.join(x, 'Essentials/userdata/big.bin')).equals(fs.readFileSync(w.p('plugins/Essentials/userdata/big.bin'))));
});

function hasTool(name: string): boolean {
  try {
    execFileSync(name, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test('links and special files are skipped, the forwarding secret is left out, the root server.properties is redacted', async () => {
  for (const format of ['tar.gz', 'zip'] as const) {
    const w = makeWorld();
    fs.symlinkSync('../server.properties', w.p('config/sym'));
    fs.symlinkSync(w.outside, w.p('config/out'));
    execFileSync('mkfifo', [w.p('config/pipe')]);
    fs.linkSync(w.p('config/paper-global.yml'), w.p('config/hard-secret.yml'));
    const r = await w.run(req(['config', 'server.properties'], format, `a.${format}`, '.'));
    assert.equal(r.code, undefined, JSON.stringify(r));
    const got = await readBack(w.p(`a.${format}`), format);
    assert.deepEqual([...got.keys()].sort(), ['config', 'config/paper.yml', 'server.properties'], format);
    assert.equal(got.get('server.properties')!.data.toString(), 'motd=hi\nrcon.password=<redacted by felis>\nserver-port=25565\n');
    assert.equal(fs.readFileSync(w.p('server.properties'), 'utf8'), PROPS);
    const raw = format === 'zip' ? fs.readFileSync(w.p('a.zip')) : zlib.gunzipSync(fs.readFileSync(w.p(`a.${format}`)));
    assert.ok(!raw.includes(SECRET_TEXT.trim()), format);
  }
});

test('the withheld file itself, an existing name, a bad name, a bad format, mixed folders, the root, a missing path: refused, nothing written', async () => {
  const w = world();
  fs.writeFileSync(w.p('plugins/taken.tar.gz'), 'taken');
  // The withheld ledger is what any mutation's Job keeps; it is not the op's doing.
  const snap = () => execFileSync('find', [w.root, '-path', `*/${LEDGER_DIR}`, '-prune', '-o', '-printf', '%P %s\n']).toString();
  await w.run(req(['plugins/nope'], 'zip', 'x.zip'));
  const before = snap();
  const cases: Array<[OpCall, string, RegExp]> = [
    [req(['plugins/Essentials'], 'tar.gz', 'taken.tar.gz'), 'exists', /already exists/],
    [req(['plugins/Essentials'], 'tar.gz', 'x.zip'), 'bad_name', /must end in \.tar\.gz or \.tgz/],
    [req(['plugins/Essentials'], 'tar.gz', 'a/b.tar.gz'), 'bad_name', /without a slash/],
    [req(['plugins/Essentials'], 'tar.gz', '.felis-edit-0123456789ab'), 'bad_name', /must end|reserved/],
    [req(['plugins/Essentials'], 'tar.gz', 'evil\u202egpj.tar.gz'), 'bad_name', /bidirectional control character \(U\+202E\)/],
    [req(['plugins/Essentials'], 'rar', 'x.rar'), 'bad_path', /not a format/],
    [req(['plugins/Essentials', 'config/paper.yml'], 'zip', 'x.zip'), 'bad_path', /one folder/],
    [req(['plugins/Essentials', 'plugins/Essentials/'], 'zip', 'x.zip'), 'bad_path', /named twice/],
    [req(['.'], 'zip', 'x.zip', '.'), 'bad_path', /^"\.": the path names the world folder itself/],
    [req(['../outside'], 'zip', 'x.zip', '.'), 'bad_path', /^"\.\.\/outside": the path leads out of the world$/],
    [req(['plugins/nope'], 'zip', 'x.zip'), 'not_found', /nope/],
    [req(['config/paper-global.yml'], 'zip', 'x.zip', 'config'), 'bad_path', /forwarding secret/],
    [req(['plugins/Essentials'], 'zip', 'x.zip', 'config'), 'bad_path', /is in plugins, not config/],
  ];
  for (const [r, code, message] of cases) {
    const got = await w.run(r);
    assert.equal(got.code, code, JSON.stringify(r));
    assert.match(got.error ?? '', message, JSON.stringify(r));
  }
  assert.equal(snap(), before);
});

test('a failure part way (a crash before the archive lands) leaves no archive and no working file', async () => {
  for (const format of PACK_FORMATS) {
    const w = world();
    const ctx = openContext(w.root, {});
    try {
      await assert.rejects(
        compress(
          ctx,
          { ...req(['plugins/Essentials'], format, `c.${format}`), worldsRoot: w.root },
          {
            beforeLand: () => {
              throw new Error('crash');
            },
          },
        ),
        /crash/,
      );
    } finally {
      ctx.root.close();
    }
    assert.deepEqual(
      fs.readdirSync(w.p('plugins')).filter((n) => n.startsWith('c.') || n.startsWith('.felis')),
      [],
      format,
    );
  }
});

test('a tar entry is the file as it was opened: bytes it gained are left out, one that shrank fails the archive', async () => {
  const out = new PassThrough();
  const parts: Buffer[] = [];
  out.on('data', (c: Buffer) => parts.push(c));
  const sink = new TarSink(await compressorFor('tar.gz'), out);
  const meta = { name: 'grew', mode: 0o100644, mtime: new Date(0) };
  assert.equal(await sink.addFile(meta, [Buffer.alloc(6, 1), Buffer.alloc(6, 2)], 0, 10), 10);
  await sink.finish();
  out.end();
  const [h] = await tarHeaders(zlib.gunzipSync(Buffer.concat(parts)));
  assert.equal(h!.size, 10);
  const sink2 = new TarSink(await compressorFor('tar.gz'), new PassThrough());
  await assert.rejects(sink2.addFile({ ...meta, name: 'shrank' }, [Buffer.alloc(4)], 0, 10), /shrank while it was being packed/);
});

async function tarHeaders(plain: Buffer): Promise<tar.Header[]> {
  const ex = tar.extract();
  const hs: tar.Header[] = [];
  const done = new Promise<void>((resolve, reject) => {
    ex.on('entry', (h, stream, next) => {
      hs.push(h);
      stream.resume();
      stream.on('end', next);
    });
    ex.on('finish', resolve);
    ex.on('error', reject);
  });
  Readable.from([plain]).pipe(ex as unknown as NodeJS.WritableStream);
  await done;
  return hs;
}

test('the compressors are streams whose output the reference decoders read', async () => {
  const text = Buffer.from('felis '.repeat(10_000));
  for (const f of ['tar.gz', 'tar.zst'] as const) {
    const c = await compressorFor(f);
    const parts: Buffer[] = [];
    c.on('data', (b: Buffer) => parts.push(b));
    c.end(text);
    await new Promise((r) => c.on('end', r));
    const back = f === 'tar.gz' ? zlib.gunzipSync(Buffer.concat(parts)) : zlib.zstdDecompressSync(Buffer.concat(parts));
    assert.ok(back.equals(text), f);
  }
  assert.ok(gzipSync(text).length < text.length);
});

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { content, makeWorld, OUTSIDE_TEXT, PROPS, SECRET_TEXT, sha256 } from '../../../job/testing/world.ts';
import { formatResultLine, RESULT_PREFIX } from '../../../lib/protocol/result.ts';
import { parseResultPayload } from '../../../lib/protocol/result-parse.ts';

test('a read returns the bytes, binary-safe through the result line', async () => {
  const w = makeWorld();
  const bytes = Buffer.from([0xff, 0xfe, 0x6f, 0x6b, 0x00, 0x80]);
  fs.writeFileSync(w.p('bin.dat'), bytes);
  const r = await w.run({ op: 'read', path: 'bin.dat' });
  assert.deepEqual(content(r), bytes);
  assert.equal(r.sha256, sha256(bytes));
  assert.equal(r.content_sha256, sha256(bytes));
  const line = formatResultLine(r);
  const back = parseResultPayload(line.slice(RESULT_PREFIX.length).trimEnd());
  assert.deepEqual(Buffer.from(back.content!, 'base64'), bytes);
});

test('escapes give a code, never content and never an infra error', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('plugins'));
  fs.symlinkSync(w.outside, w.p('plugins/out-dir'));
  fs.symlinkSync('../../outside', w.p('plugins/rel-out-dir'));
  fs.symlinkSync(path.join(w.outside, 'secret.txt'), w.p('abs-file-link.txt'));
  const paths = [
    '../outside/secret.txt',
    'config/../../outside/secret.txt',
    path.join(w.outside, 'secret.txt'),
    '/etc/passwd',
    'plugins/out-dir/secret.txt',
    'plugins/rel-out-dir/secret.txt',
    'abs-file-link.txt',
    '../../../../../../etc/passwd',
  ];
  for (const p of paths) {
    const r = await w.run({ op: 'read', path: p });
    assert.ok(r.code === 'bad_path' || r.code === 'not_found', `${p}: ${JSON.stringify(r)}`);
    assert.equal(r.content, undefined, p);
    assert.equal(r.sha256, undefined, p);
  }
});

test('missing → not_found; a folder → bad_path; over 1 MiB → too_large; exactly 1 MiB reads', async () => {
  const w = makeWorld();
  assert.deepEqual(await w.run({ op: 'read', path: 'nope.txt' }), { code: 'not_found', error: 'nope.txt does not exist' });
  assert.deepEqual(await w.run({ op: 'read', path: 'config/missing/x' }), { code: 'not_found', error: 'config/missing/x does not exist' });
  assert.deepEqual(await w.run({ op: 'read', path: 'config' }), { code: 'bad_path', error: 'config is a directory, not a file' });
  assert.deepEqual(await w.run({ op: 'read', path: '' }), { code: 'bad_path', error: '. is a directory, not a file' });
  fs.writeFileSync(w.p('big.bin'), Buffer.alloc((1 << 20) + 1, 0x61));
  assert.deepEqual(await w.run({ op: 'read', path: 'big.bin' }), {
    code: 'too_large',
    error: 'big.bin is 1048577 bytes; the editor reads at most 1048576',
  });
  fs.writeFileSync(w.p('max.bin'), Buffer.alloc(1 << 20, 0x62));
  const ok = await w.run({ op: 'read', path: 'max.bin' });
  assert.equal(content(ok).length, 1 << 20);
  const empty = await w.run({ op: 'read', path: (fs.writeFileSync(w.p('empty'), ''), 'empty') });
  assert.equal(empty.code, undefined);
  assert.equal(content(empty).length, 0);
  assert.equal(empty.sha256, sha256(''));
});

test('a FIFO is refused without blocking; a file path with a trailing slash is bad_path', async () => {
  const w = makeWorld();
  execFileSync('mkfifo', [w.p('pipe')]);
  assert.deepEqual(await w.run({ op: 'read', path: 'pipe' }), { code: 'bad_path', error: 'pipe is not a regular file' });
  assert.equal((await w.run({ op: 'read', path: 'server.properties/' })).code, 'bad_path');
});

test('the forwarding secret is refused under every spelling; paper.yml stays readable', async () => {
  const w = makeWorld();
  for (const p of ['config/paper-global.yml', './config/paper-global.yml', 'config//paper-global.yml', 'config/../config/paper-global.yml', 'config/./paper-global.yml']) {
    const r = await w.run({ op: 'read', path: p });
    assert.equal(r.code, 'bad_path', p);
    assert.match(r.error!, /forwarding secret/, p);
    assert.equal(r.content, undefined);
  }
  const paper = await w.run({ op: 'read', path: 'config/paper.yml' });
  assert.equal(content(paper).toString(), 'paper: true\n');
  // The name check comes before the open: refused even when the file does not exist.
  fs.rmSync(w.p('config/paper-global.yml'));
  assert.equal((await w.run({ op: 'read', path: './config/paper-global.yml' })).code, 'bad_path');
});

test('a symlink, a directory link or a hard link to the secret is bad_path', async () => {
  const w = makeWorld();
  fs.symlinkSync('config/paper-global.yml', w.p('sym.yml'));
  fs.symlinkSync('config', w.p('cfg-link'));
  fs.linkSync(w.p('config/paper-global.yml'), w.p('hard.yml'));
  for (const p of ['sym.yml', 'cfg-link/paper-global.yml', 'hard.yml']) {
    const r = await w.run({ op: 'read', path: p });
    assert.equal(r.code, 'bad_path', p);
    assert.match(r.error!, /forwarding secret/);
    assert.equal(r.content, undefined);
  }
  // If the guarded name is itself a link, its target is protected.
  fs.renameSync(w.p('config/paper-global.yml'), w.p('config/real-global.yml'));
  fs.symlinkSync('real-global.yml', w.p('config/paper-global.yml'));
  const r = await w.run({ op: 'read', path: 'config/real-global.yml' });
  assert.equal(r.code, 'bad_path');
  assert.ok(!content(r).toString().includes(SECRET_TEXT.trim()));
});

test('server.properties is redacted: sha256 of disk bytes, content_sha256 of what is sent', async () => {
  const w = makeWorld();
  const r = await w.run({ op: 'read', path: 'server.properties' });
  const redacted = 'motd=hi\nrcon.password=<redacted by felis>\nserver-port=25565\n';
  assert.equal(content(r).toString(), redacted);
  assert.equal(r.sha256, sha256(PROPS));
  assert.equal(r.content_sha256, sha256(redacted));
  assert.notEqual(r.sha256, r.content_sha256);
  fs.mkdirSync(w.p('plugins'));
  fs.writeFileSync(w.p('plugins/server.properties'), PROPS);
  const plugin = await w.run({ op: 'read', path: 'plugins/server.properties' });
  assert.equal(content(plugin).toString(), PROPS);
  assert.equal(plugin.sha256, plugin.content_sha256);
  // ./server.properties is the same file.
  assert.equal(content(await w.run({ op: 'read', path: './server.properties' })).toString(), redacted);
});

test('a symlink or hard link to server.properties is redacted, incl. Limbo forwarding-secrets and CRLF', async () => {
  const w = makeWorld();
  const limbo = 'motd=hi\r\n  forwarding-secrets=abc\r\nrcon.password=p\nkeep=1\r\n';
  fs.writeFileSync(w.p('server.properties'), limbo);
  fs.symlinkSync('server.properties', w.p('props-link'));
  fs.linkSync(w.p('server.properties'), w.p('props-hard'));
  const want = 'motd=hi\r\nforwarding-secrets=<redacted by felis>\nrcon.password=<redacted by felis>\nkeep=1\r\n';
  for (const p of ['server.properties', 'props-link', 'props-hard']) {
    const r = await w.run({ op: 'read', path: p });
    assert.equal(content(r).toString(), want, p);
    assert.equal(r.sha256, sha256(limbo));
  }
});

test('read never follows a link out, even to a file that looks harmless', async () => {
  const w = makeWorld();
  fs.symlinkSync('../outside/secret.txt', w.p('climb.txt'));
  const r = await w.run({ op: 'read', path: 'climb.txt' });
  assert.equal(r.code, 'bad_path');
  assert.ok(!JSON.stringify(r).includes(Buffer.from(OUTSIDE_TEXT).toString('base64')));
});

test('the read itself is capped at 1 MiB, whatever the size said (a file growing after the stat)', async () => {
  const { readCapped } = await import('../../../job/volume/read-capped.ts');
  const w = makeWorld();
  fs.writeFileSync(w.p('grown.bin'), Buffer.alloc(3 << 20, 0x63));
  const fd = fs.openSync(w.p('grown.bin'), 'r');
  try {
    assert.equal(readCapped(fd, 1 << 20).length, 1 << 20);
  } finally {
    fs.closeSync(fd);
  }
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { makeWorld, openFds, type World } from '../../../job/testing/world.ts';
import { WorldRoot } from '../../../job/volume/root.ts';
import { formatResultLine } from '../../../lib/protocol/result.ts';
import { parseResultPayload } from '../../../lib/protocol/result-parse.ts';
import { type ContentReport, contentSearchTree } from './content-search.ts';

function write(w: World, rel: string, text: string | Buffer = 'x'): void {
  fs.mkdirSync(w.p(rel.split('/').slice(0, -1).join('/')), { recursive: true });
  fs.writeFileSync(w.p(rel), text);
}

async function find(w: World, text: string, extra: { path?: string; q?: string; limit?: number } = {}): Promise<ContentReport> {
  const r = await w.run({ op: 'search', path: extra.path ?? '', text, ...(extra.q ? { q: extra.q } : {}), ...(extra.limit ? { limit: extra.limit } : {}) } as never);
  assert.equal(r.code, undefined, r.error);
  return r.report as ContentReport;
}
const where = (r: ContentReport) => r.matches.map((m) => `${m.path}:${m.line}:${m.column}`).sort();

test('lines holding the text, in any ASCII case, below the path, with path, line, column and text', async () => {
  const w = makeWorld();
  write(w, 'logs/latest.log', '[12:00] Server started\n[12:01] Steve joined the game\n[12:02] steve left\n');
  write(w, 'plugins/Essentials/config.yml', 'motd: welcome STEVE\n');
  write(w, 'world/region/r.0.0.mca', Buffer.concat([Buffer.from('steve'), Buffer.alloc(64)]));
  const r = await find(w, 'Steve');
  assert.deepEqual(where(r), ['logs/latest.log:2:9', 'logs/latest.log:3:9', 'plugins/Essentials/config.yml:1:15']);
  assert.deepEqual(
    r.matches.find((m) => m.line === 2),
    { path: 'logs/latest.log', line: 2, column: 9, text: '[12:01] Steve joined the game' },
  );
  assert.equal(r.truncated, false);
  assert.ok(r.scanned_files >= 5, String(r.scanned_files));
  assert.ok(r.scanned_bytes > 100, String(r.scanned_bytes));
  // Below a folder, and only in files whose name matches q.
  assert.deepEqual(where(await find(w, 'steve', { path: 'logs' })), ['logs/latest.log:2:9', 'logs/latest.log:3:9']);
  assert.deepEqual(where(await find(w, 'steve', { q: '*.yml' })), ['plugins/Essentials/config.yml:1:15']);
});

test('the answer survives the result line: the report decoded as sent', async () => {
  const w = makeWorld();
  write(w, 'a.txt', 'héllo wörld\n');
  const r = await w.run({ op: 'search', path: '', text: 'wörld' } as never);
  const line = formatResultLine(r);
  assert.deepEqual(parseResultPayload(line.slice(line.indexOf('{')).trimEnd()), r);
  assert.deepEqual((r.report as ContentReport).matches, [{ path: 'a.txt', line: 1, column: 8, text: 'héllo wörld' }]);
});

test('server.properties is searched on its redacted text: the secret value finds nothing, the placeholder finds the line', async () => {
  const w = makeWorld();
  assert.deepEqual((await find(w, 'hunter2')).matches, []);
  assert.deepEqual((await find(w, 'HUNTER')).matches, []);
  assert.deepEqual((await find(w, 'rcon.password=h')).matches, []);
  assert.deepEqual((await find(w, '<redacted by felis>')).matches, [{ path: 'server.properties', line: 2, column: 15, text: 'rcon.password=<redacted by felis>' }]);
  // A hard link to it, and a symbolic link (not followed, so not searched), show no secret either.
  fs.linkSync(w.p('server.properties'), w.p('props-copy.txt'));
  fs.symlinkSync('server.properties', w.p('props-link.txt'));
  assert.deepEqual((await find(w, 'hunter2')).matches, []);
  assert.deepEqual(where(await find(w, 'rcon.password')), ['props-copy.txt:2:1', 'server.properties:2:1']);
  // A plain copy is an ordinary file: its own text (it is not the server's file).
  write(w, 'world/server.properties', 'rcon.password=other\n');
  assert.deepEqual(where(await find(w, 'password=other')), ['world/server.properties:1:6']);
});

test('the withheld file is never searched: by name, by hard link, by a copy of its content; never opened', async () => {
  const w = makeWorld();
  assert.deepEqual((await find(w, 'XYZZY')).matches, []);
  fs.mkdirSync(w.p('backup'));
  fs.linkSync(w.p('config/paper-global.yml'), w.p('backup/pg.yml'));
  fs.copyFileSync(w.p('config/paper-global.yml'), w.p('backup/copy.yml'));
  assert.deepEqual((await find(w, 'XYZZY')).matches, []);
  assert.deepEqual((await find(w, 'forwarding-secret', { path: 'config' })).matches, []);
  // Not opened: unreadable to anyone, it is still skipped without an error (as root, the mode is no bar, so this only checks the answer).
  fs.chmodSync(w.p('config/paper-global.yml'), 0o000);
  assert.deepEqual((await find(w, 'XYZZY')).matches, []);
  // A different content in a file of another name is searched.
  write(w, 'backup/other.yml', 'forwarding-secret-XYZZY and more\n');
  assert.deepEqual(where(await find(w, 'XYZZY')), ['backup/other.yml:1:19']);
});

test('links are never followed, folders nor files; working files are skipped; special files are not opened', async () => {
  const w = makeWorld();
  fs.symlinkSync(w.outside, w.p('out-link'));
  fs.symlinkSync(`${w.outside}/secret.txt`, w.p('secret-link.txt'));
  write(w, '.felis-edit-0123456789ab', 'needle');
  write(w, '.felis-unzip-0123456789ab/a.txt', 'needle');
  write(w, 'world/.felis-edit-notes.txt', 'needle in a user file');
  assert.deepEqual(where(await find(w, 'needle')), ['world/.felis-edit-notes.txt:1:1']);
  assert.deepEqual((await find(w, 'outside-secret')).matches, []);
  const fifo = w.p('a.fifo');
  try {
    (await import('node:child_process')).execFileSync('mkfifo', [fifo]);
  } catch {
    return; // no mkfifo here: the rest was checked
  }
  assert.deepEqual((await find(w, 'outside')).matches, []);
});

test('binary files (a NUL in the first 8 KiB) are skipped; a text file over the size limit is skipped and truncates', async () => {
  const w = makeWorld();
  write(w, 'bin.dat', Buffer.concat([Buffer.from('needle\n'), Buffer.alloc(10)]));
  write(w, 'big.log', `needle\n${'x'.repeat(5000)}\n`);
  write(w, 'small.log', 'needle\n');
  const root = WorldRoot.open(w.root);
  try {
    const r = (await contentSearchTree(root, '', { content: 'needle', maxFileBytes: 1000 })).report as ContentReport;
    assert.deepEqual(where(r), ['small.log:1:1']);
    assert.equal(r.truncated, true, 'big.log was not searched');
    const all = (await contentSearchTree(root, '', { content: 'needle' })).report as ContentReport;
    assert.deepEqual(where(all), ['big.log:1:1', 'small.log:1:1']);
    assert.equal(all.truncated, false);
  } finally {
    root.close();
  }
});

test('limit, and the byte and time budgets, stop the search with truncated; nothing stays open', async () => {
  const w = makeWorld();
  for (let i = 0; i < 30; i++) write(w, `d${i % 3}/f${i}.txt`, 'needle\nneedle\n');
  const fds = openFds();
  const lim = await find(w, 'needle', { limit: 5 });
  assert.deepEqual([lim.matches.length, lim.truncated], [5, true]);
  const exact = await find(w, 'needle', { limit: 60 });
  assert.deepEqual([exact.matches.length, exact.truncated], [60, false], 'exactly the limit is not truncated');
  const root = WorldRoot.open(w.root);
  try {
    const bytes = (await contentSearchTree(root, '', { content: 'needle', budgetBytes: 100 })).report as ContentReport;
    assert.equal(bytes.truncated, true);
    assert.ok(bytes.scanned_bytes <= 100, String(bytes.scanned_bytes));
    let t = 0;
    const time = (await contentSearchTree(root, '', { content: 'needle', budgetMs: 10, now: () => (t += 3) })).report as ContentReport;
    assert.equal(time.truncated, true);
    assert.ok(time.matches.length < 60);
  } finally {
    root.close();
  }
  assert.equal(openFds(), fds);
});

test('hostile input: a bad text, a short name filter, a path outside or through a link are refused', async () => {
  const w = makeWorld();
  fs.symlinkSync(w.outside, w.p('out-link'));
  for (const text of ['', 'a\nb', 'a\rb', 'a\0b', 'x'.repeat(257), 'é'.repeat(129)]) {
    const r = await w.run({ op: 'search', path: '', text } as never);
    assert.equal(r.code, 'bad_path', JSON.stringify(text));
  }
  assert.equal((await w.run({ op: 'search', path: '', text: 'x'.repeat(256) } as never)).code, undefined);
  assert.equal((await w.run({ op: 'search', path: '', text: 'ab', q: 'a' } as never)).code, 'bad_path');
  for (const path of ['../outside', '/etc', 'out-link', 'nope']) {
    const r = await w.run({ op: 'search', path, text: 'secret' } as never);
    assert.ok(r.code === 'bad_path' || r.code === 'not_found', `${path}: ${r.code}`);
  }
  // Regex syntax is literal text.
  write(w, 'r.txt', 'a.*b\nab\n');
  assert.deepEqual(where(await find(w, '.*')), ['r.txt:1:2']);
});

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { treeDigest } from '../../../job/archive/forge.test-kit.ts';
import { packToStream, resolveSource } from '../../../job/archive/pack.ts';
import { LEDGER_DIR } from '../../../job/runtime/withheld.ts';
import { errnoError, makeWorld, PROPS, SECRET_TEXT } from '../../../job/testing/world.ts';
import { WorldRoot } from '../../../job/volume/root.ts';

const hasInfoZip = spawnSync('unzip', ['-v'], { stdio: 'ignore' }).status === 0;

function world() {
  const w = makeWorld();
  fs.mkdirSync(w.p('world/region'), { recursive: true });
  fs.mkdirSync(w.p('world/empty'));
  fs.writeFileSync(w.p('world/level.dat'), Buffer.from([1, 2, 3, 0, 255]));
  fs.writeFileSync(w.p('world/region/r.0.0.mca'), Buffer.alloc(300_000, 7));
  fs.writeFileSync(w.p('world/run.sh'), '#!/bin/sh\n', { mode: 0o755 });
  return w;
}

test('pack a folder, extract it elsewhere: the trees are equal; the archive lands beside the folder', async () => {
  const w = world();
  const lines: string[] = [];
  const r = await w.run({ op: 'zip', path: 'world' }, { progress: (l) => lines.push(l) });
  assert.equal(r.code, undefined, JSON.stringify(r));
  assert.equal(r.files, 3);
  assert.equal(r.bytes, fs.statSync(w.p('world.zip')).size);
  assert.deepEqual(JSON.parse(lines.at(-1)!.replace(/^FELIS-FILES-PROGRESS: /, '')), { done: 300_015, total: 300_015 });
  fs.mkdirSync(w.p('copy'));
  assert.equal((await w.run({ op: 'unzip', path: 'world.zip', to: 'copy' })).files, 3);
  assert.equal(treeDigest(w.p('copy/world')), treeDigest(w.p('world')));
  assert.deepEqual(
    fs.readdirSync(w.root).filter((n) => n.startsWith('.felis') && n !== LEDGER_DIR),
    [],
  );
});

test('a taken name moves on to "<name> (2).zip"; --to names the archive; an existing --to is exists; a --to that is no new name is bad_name', async () => {
  const w = world();
  fs.writeFileSync(w.p('world.zip'), 'taken');
  assert.equal((await w.run({ op: 'zip', path: 'world' })).files, 3);
  assert.ok(fs.existsSync(w.p('world (2).zip')));
  assert.equal(fs.readFileSync(w.p('world.zip'), 'utf8'), 'taken');
  assert.equal((await w.run({ op: 'zip', path: 'world/level.dat', to: 'backup.zip' })).files, 1);
  assert.ok(fs.existsSync(w.p('world/backup.zip')));
  const before = treeDigest(w.base);
  assert.equal((await w.run({ op: 'zip', path: 'world', to: 'world.zip' })).code, 'exists');
  for (const to of ['a/b.zip', '..', '.felis-edit-0123456789ab', 'tab\t.zip', 'evil\u202epiz.zip', `${'n'.repeat(252)}.zip`])
    assert.equal((await w.run({ op: 'zip', path: 'world', to })).code, 'bad_name', to);
  assert.equal(treeDigest(w.base), before);
});

test('the forwarding secret is withheld (also a hard link), server.properties is redacted (also a hard link), links and pipes are skipped', async () => {
  const w = world();
  fs.linkSync(w.p('config/paper-global.yml'), w.p('config/hard-secret.yml'));
  fs.linkSync(w.p('server.properties'), w.p('config/props-link'));
  fs.writeFileSync(w.p('config/server.properties'), PROPS); // not the root one: packed as it is
  fs.symlinkSync('../server.properties', w.p('config/sym'));
  execFileSync('mkfifo', [w.p('config/pipe')]);
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c) => chunks.push(c));
  const root = WorldRoot.open(w.root);
  try {
    const src = resolveSource(root, 'config');
    assert.ok('isDir' in src);
    const stats = await packToStream(root, src, out);
    assert.deepEqual({ ...stats, bytesRead: 0 }, { files: 3, dirs: 1, skipped: 2, withheld: 2, bytesRead: 0 });
  } finally {
    root.close();
  }
  fs.writeFileSync(path.join(w.outside, 'c.zip'), Buffer.concat(chunks));
  fs.mkdirSync(path.join(w.outside, 'x'));
  execFileSync('unzip', ['-q', path.join(w.outside, 'c.zip'), '-d', path.join(w.outside, 'x')]);
  const got = fs.readdirSync(path.join(w.outside, 'x/config')).sort();
  assert.deepEqual(got, ['paper.yml', 'props-link', 'server.properties']);
  assert.equal(fs.readFileSync(path.join(w.outside, 'x/config/props-link'), 'utf8'), 'motd=hi\nrcon.password=<redacted by felis>\nserver-port=25565\n');
  assert.equal(fs.readFileSync(path.join(w.outside, 'x/config/server.properties'), 'utf8'), PROPS);
  assert.ok(!Buffer.concat(chunks).includes(SECRET_TEXT.trim()));
});

test('the root (also through a link), a missing path and the secret itself cannot be packed; nothing is written', async () => {
  const w = world();
  fs.symlinkSync('..', w.p('world/up'));
  fs.symlinkSync('../outside', w.p('out'));
  const before = treeDigest(w.base);
  for (const [p, code] of [
    ['', 'bad_path'],
    ['.', 'bad_path'],
    ['world/up', 'bad_path'],
    ['world/..', 'bad_path'],
    ['out', 'bad_path'],
    ['../outside', 'bad_path'],
    ['nope', 'not_found'],
    ['config/paper-global.yml', 'bad_path'],
  ] as const) {
    assert.equal((await w.run({ op: 'zip', path: p })).code, code, p);
  }
  assert.equal(treeDigest(w.base), before);
});

test('a failure while landing leaves no archive and no working file', async () => {
  const w = world();
  const before = treeDigest(w.base);
  const r = await w.run(
    { op: 'zip', path: 'world' },
    {
      fsync: () => {
        throw errnoError('ENOSPC');
      },
    },
  );
  assert.equal(r.code, 'no_space');
  assert.equal(treeDigest(w.base), before);
});

test('Info-ZIP accepts the archives', { skip: hasInfoZip ? false : 'Info-ZIP unzip is not installed (apt-get install -y unzip)' }, async () => {
  const w = world();
  assert.equal((await w.run({ op: 'zip', path: 'world' })).files, 3);
  const out = execFileSync('unzip', ['-t', w.p('world.zip')], { encoding: 'utf8' });
  assert.match(out, /No errors detected/);
});

test('small files and already-compressed formats are stored; larger compressible files are deflated', async () => {
  const { compressionLevelFor } = await import('../../../job/archive/pack.ts');
  assert.equal(compressionLevelFor('world/level.dat', 10 << 20), 0);
  assert.equal(compressionLevelFor('world/region/r.0.0.MCA', 10 << 20), 0);
  assert.equal(compressionLevelFor('plugins/x.jar', 10 << 20), 0);
  assert.equal(compressionLevelFor('logs/latest.log', 100), 0);
  assert.equal(compressionLevelFor('logs/latest.log', 1 << 20), 1);
  // And the archive says so: Info-ZIP lists the method of each entry.
  const w = world();
  fs.writeFileSync(w.p('world/big.log'), 'line\n'.repeat(50_000));
  assert.equal((await w.run({ op: 'zip', path: 'world' })).files, 4);
  if (hasInfoZip) {
    const listing = execFileSync('unzip', ['-v', w.p('world.zip')], { encoding: 'utf8' });
    assert.match(listing, /Defl:\S*\s.*world\/big\.log/);
    assert.match(listing, /Stored.*world\/region\/r\.0\.0\.mca/);
  }
});

test('an entry swapped between the plan and its open (a hard link to the secret, a symlink outside) is skipped, never packed', async () => {
  for (const swap of ['hardlink', 'symlink', 'other-file'] as const) {
    const w = world();
    fs.writeFileSync(path.join(w.outside, 'outside.txt'), 'OUTSIDE-BYTES');
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c) => chunks.push(c));
    const root = WorldRoot.open(w.root);
    let swapped = 0;
    try {
      const src = resolveSource(root, 'world');
      assert.ok('isDir' in src);
      const stats = await packToStream(root, src, out, undefined, undefined, {
        beforeOpen: (entry) => {
          if (entry !== 'world/level.dat') return;
          swapped++;
          fs.rmSync(w.p('world/level.dat'));
          if (swap === 'hardlink') fs.linkSync(w.p('config/paper-global.yml'), w.p('world/level.dat'));
          else if (swap === 'symlink') fs.symlinkSync(path.join(w.outside, 'outside.txt'), w.p('world/level.dat'));
          else fs.writeFileSync(w.p('world/level.dat'), 'A-NEW-FILE');
        },
      });
      assert.equal(swapped, 1, swap);
      assert.deepEqual({ files: stats.files, skipped: stats.skipped }, { files: 2, skipped: 1 }, swap);
    } finally {
      root.close();
    }
    const zip = Buffer.concat(chunks);
    assert.ok(!zip.includes(SECRET_TEXT.trim()), `${swap}: the secret is not packed`);
    assert.ok(!zip.includes('OUTSIDE-BYTES') && !zip.includes('A-NEW-FILE'), `${swap}: nothing but what was planned`);
    assert.ok(!zip.includes('world/level.dat'), `${swap}: the entry is left out`);
  }
});

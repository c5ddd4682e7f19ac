import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { test } from 'node:test';
import { makeWorld, SECRET_TEXT, type World } from '../../../job/testing/world.ts';
import type { ModeChange } from '../../../lib/protocol/batch-env.ts';

const chmod = (w: World, files: ModeChange[]) => w.run({ op: 'chmod-many', path: '.', batch: { files } });
const modeOf = (p: string) => (fs.lstatSync(p).mode & 0o7777).toString(8);

function filled(): World {
  const w = makeWorld();
  fs.mkdirSync(w.p('plugins'));
  fs.writeFileSync(w.p('plugins/run.sh'), '#!/bin/sh\n');
  fs.writeFileSync(w.p('plugins/a.yml'), 'a');
  fs.chmodSync(w.p('plugins/run.sh'), 0o644);
  fs.chmodSync(w.p('plugins/a.yml'), 0o644);
  fs.symlinkSync('run.sh', w.p('plugins/link'));
  return w;
}

test('chmod-many sets each mode, files and folders, and lists them done', async () => {
  const w = filled();
  const r = await chmod(w, [
    { path: 'plugins/run.sh', mode: '755' },
    { path: 'plugins', mode: '750' },
    { path: 'plugins/a.yml', mode: '000' },
  ]);
  assert.deepEqual(r, { done: ['plugins/run.sh', 'plugins', 'plugins/a.yml'], failed: [] });
  assert.equal(modeOf(w.p('plugins/run.sh')), '755');
  assert.equal(modeOf(w.p('plugins')), '750');
  assert.equal(modeOf(w.p('plugins/a.yml')), '0');
  // A file whose mode keeps the Job from opening it can still be given a mode back.
  assert.deepEqual(await chmod(w, [{ path: 'plugins/a.yml', mode: '640' }]), { done: ['plugins/a.yml'], failed: [] });
  assert.equal(modeOf(w.p('plugins/a.yml')), '640');
});

test('chmod-many: links, the withheld file under any name, bad modes and clashes are refused; nothing changed', async () => {
  const cases: Array<[ModeChange[], string, string, (w: World) => void]> = [
    [
      [
        { path: 'plugins/a.yml', mode: '600' },
        { path: 'plugins/link', mode: '600' },
      ],
      'bad_path',
      'plugins/link',
      () => {},
    ],
    [
      [
        { path: 'plugins/a.yml', mode: '600' },
        { path: 'config/paper-global.yml', mode: '644' },
      ],
      'bad_path',
      'config/paper-global.yml',
      () => {},
    ],
    [
      [
        { path: 'plugins/a.yml', mode: '600' },
        { path: 'plugins/hard', mode: '644' },
      ],
      'bad_path',
      'plugins/hard',
      (w) => fs.linkSync(w.p('config/paper-global.yml'), w.p('plugins/hard')),
    ],
    [
      [
        { path: 'plugins/a.yml', mode: '600' },
        { path: 'plugins/copy', mode: '644' },
      ],
      'bad_path',
      'plugins/copy',
      (w) => fs.writeFileSync(w.p('plugins/copy'), SECRET_TEXT),
    ],
    [
      [
        { path: 'plugins/a.yml', mode: '600' },
        { path: 'plugins/a.yml', mode: '644' },
      ],
      'batch_conflict',
      'plugins/a.yml',
      () => {},
    ],
    [
      [
        { path: 'plugins/a.yml', mode: '600' },
        { path: 'plugins/nope', mode: '644' },
      ],
      'not_found',
      'plugins/nope',
      () => {},
    ],
    [
      [
        { path: 'plugins/a.yml', mode: '600' },
        { path: '../outside/secret.txt', mode: '644' },
      ],
      'bad_path',
      '../outside/secret.txt',
      () => {},
    ],
    [
      [
        { path: 'plugins/a.yml', mode: '600' },
        { path: '', mode: '755' },
      ],
      'bad_path',
      '',
      () => {},
    ],
    [
      [
        { path: 'plugins/a.yml', mode: '600' },
        { path: 'plugins/run.sh', mode: '4755' },
      ],
      'bad_path',
      'plugins/run.sh',
      () => {},
    ],
    [
      [
        { path: 'plugins/a.yml', mode: '600' },
        { path: 'plugins/fifo', mode: '644' },
      ],
      'bad_path',
      'plugins/fifo',
      (w) => execFileSync('mkfifo', [w.p('plugins/fifo')]),
    ],
  ];
  for (const [files, code, path, setup] of cases) {
    const w = filled();
    setup(w);
    const modes = ['plugins', 'plugins/a.yml', 'plugins/run.sh', 'config/paper-global.yml'].map((p) => modeOf(w.p(p)));
    const r = await chmod(w, files);
    assert.equal(r.code, code, JSON.stringify(files));
    assert.equal(r.entry, path, JSON.stringify(files));
    assert.deepEqual(
      ['plugins', 'plugins/a.yml', 'plugins/run.sh', 'config/paper-global.yml'].map((p) => modeOf(w.p(p))),
      modes,
    );
  }
});

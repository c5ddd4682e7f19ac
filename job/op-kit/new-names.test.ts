/**
 * The name rule's characters in the Job (lib/protocol/names.ts): a path an op creates is refused
 * with `bad_path` when a name in it holds a control or bidirectional control character; an
 * existing file with such a name stays readable, writable, movable and deletable.
 */

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { makeWorld, sha256, snapshot } from '../testing/world.ts';
import { landUpload } from '../upload/land.ts';
import { openContext } from './context.ts';

const BAD = ['bell\u0007.txt', 'line\nbreak.txt', 'c1\u0085.txt', 'evil\u202egpj.txt', 'lrm\u200e.txt', 'iso\u2066.txt'];

test('a path an op creates is bad_path when a name in it holds a control or bidirectional control; nothing changes', async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('ok.txt'), 'ok');
  const before = snapshot(w.root);
  for (const bad of BAD) {
    const runs: [string, Parameters<typeof w.run>[0]][] = [
      ['mkdir', { op: 'mkdir', path: bad }],
      ['mkdir below', { op: 'mkdir', path: `${bad}/x` }],
      ['write', { op: 'write', path: `config/${bad}`, content: Buffer.from('x') }],
      ['rename', { op: 'rename', path: 'ok.txt', to: bad }],
      ['copy', { op: 'copy', path: 'ok.txt', to: `config/${bad}` }],
      ['move-many', { op: 'move-many', path: '.', batch: { moves: [{ from: 'ok.txt', to: bad }] } }],
    ];
    for (const [what, req] of runs) {
      const r = await w.run(req);
      assert.equal(r.code, 'bad_path', `${what} ${JSON.stringify(bad)}: ${JSON.stringify(r)}`);
      assert.match(r.error!, /has a name that holds a (bidirectional )?control character \(U\+[0-9A-F]{4}\)/, what);
      if (what === 'move-many') assert.equal(r.entry, bad, 'the refusal names the item');
    }
    const ctx = openContext(w.root);
    try {
      const body = Buffer.from('up');
      const l = await landUpload(ctx, { path: `plugins/${bad}`, size: body.length, sha256: sha256(body), overwrite: false, parents: true }, Readable.from([body]));
      assert.equal(l.kind === 'result' ? l.result.code : l.kind, 'bad_path', `upload ${JSON.stringify(bad)}`);
    } finally {
      ctx.root.close();
    }
  }
  assert.deepEqual(snapshot(w.root), before);
});

test('an existing file with such a name is read, written over, copied and moved to good names, and deleted', async () => {
  const w = makeWorld();
  const odd = 'odd\u202e\u0007.txt';
  fs.writeFileSync(w.p(odd), 'made by a plugin');
  assert.equal((await w.run({ op: 'read', path: odd })).content, Buffer.from('made by a plugin').toString('base64'));
  assert.deepEqual(await w.run({ op: 'write', path: odd, content: Buffer.from('new') }), { sha256: sha256('new') });
  assert.equal((await w.run({ op: 'copy', path: odd, to: 'copy.txt' })).to, 'copy.txt');
  assert.deepEqual(await w.run({ op: 'rename', path: odd, to: 'renamed.txt' }), {});
  assert.equal(fs.readFileSync(w.p('renamed.txt'), 'utf8'), 'new');
  fs.writeFileSync(w.p(odd), 'again');
  assert.equal((await w.run({ op: 'delete', path: odd })).code, undefined);
  assert.equal(fs.existsSync(w.p(odd)), false);
});

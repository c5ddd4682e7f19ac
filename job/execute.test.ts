import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { execute } from './execute.ts';
import { makeWorld, openFds, snapshot, writeReq } from './test-support.ts';

test('op chmod is an execute error (infra), and upload is not implemented here; nothing is touched', async () => {
  const w = makeWorld();
  const before = snapshot(w.root);
  await assert.rejects(execute({ op: 'chmod', path: 'server.properties', worldsRoot: w.root }), { message: 'unknown op "chmod"' });
  await assert.rejects(execute({ op: '', path: '', worldsRoot: w.root }), /unknown op/);
  await assert.rejects(execute({ op: 'toString', path: '', worldsRoot: w.root }), /unknown op/);
  for (const op of ['upload']) {
    await assert.rejects(execute({ op, path: 'x.zip', worldsRoot: w.root }), /not supported/);
  }
  assert.deepEqual(snapshot(w.root), before);
});

test('a root that cannot be opened is an execute error, not a result', async () => {
  const w = makeWorld();
  await assert.rejects(execute({ op: 'list', path: '', worldsRoot: `${w.base}/missing-root` }), /open world root .*missing-root/);
  await assert.rejects(execute({ op: 'read', path: 'x', worldsRoot: w.p('server.properties') }), /open world root/);
});

test('every op on success and failure releases every fd it opened', async () => {
  const w = makeWorld();
  fs.symlinkSync(w.outside, w.p('out'));
  const before = openFds();
  for (let i = 0; i < 5; i++) {
    for (const p of ['', 'config', 'config/paper.yml', 'out/secret.txt', '../x', 'missing/x', 'server.properties/']) {
      await w.run({ op: 'list', path: p });
      await w.run({ op: 'read', path: p });
    }
    await w.run(writeReq(`f${i}`, 'x'));
    await w.run(writeReq('out/f', 'x'));
    await w.run({ op: 'mkdir', path: `d${i}` });
    await w.run({ op: 'mkdir', path: `d${i}` });
    await w.run({ op: 'rename', path: `d${i}`, to: `e${i}` });
    await w.run({ op: 'rename', path: 'config', to: 'x' });
    await w.run({ op: 'delete', path: `e${i}` });
    await w.run({ op: 'delete', path: 'out/secret.txt' });
  }
  assert.equal(openFds(), before);
});


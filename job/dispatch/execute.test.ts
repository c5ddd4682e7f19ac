import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { makeWorld, openFds, snapshot, writeReq } from '../testing/world.ts';
import { stagingName } from '../upload/session.ts';
import { execute, type OpRequest } from './execute.ts';

/** A request whose op the types would refuse, as a command line may still carry one. */
const unchecked = (op: string, path: string, worldsRoot: string) => ({ op, path, worldsRoot }) as unknown as OpRequest;

test('op chmod is an execute error (infra), and upload is not implemented here; nothing is touched', async () => {
  const w = makeWorld();
  const before = snapshot(w.root);
  await assert.rejects(execute(unchecked('chmod', 'server.properties', w.root)), { message: 'unknown op "chmod"' });
  await assert.rejects(execute(unchecked('', '', w.root)), /unknown op/);
  await assert.rejects(execute(unchecked('toString', '', w.root)), /unknown op/);
  for (const op of ['upload'] as const) {
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

test('a mutation removes upload sessions abandoned past their own idle period; fresh ones, links and unreadable states stay; a read or a refused op sweeps nothing', async () => {
  const w = makeWorld();
  const hour = 3_600_000;
  const session = (id: string, state: object | string) => {
    const dir = w.p(stagingName(id));
    fs.mkdirSync(dir);
    fs.writeFileSync(`${dir}/data`, 'bytes');
    fs.writeFileSync(`${dir}/state.json`, typeof state === 'string' ? state : JSON.stringify({ id, path: 'x', size: 9, received: 5, parts: [], ...state }));
    return dir;
  };
  const abandoned = session('a'.repeat(32), { touched: Date.now() - hour }); // past the default 30 min
  const longIdle = session('b'.repeat(32), { touched: Date.now() - hour, idle_ms: 2 * hour }); // its receiver would still wait
  const shortIdle = session('c'.repeat(32), { touched: Date.now() - 120_000, idle_ms: 60_000 });
  const fresh = session('d'.repeat(32), { touched: Date.now() });
  const junk = session('e'.repeat(32), 'not json');
  // A link at a staging name, and a state that is a link to a file outside: neither is followed.
  fs.symlinkSync(w.outside, w.p(stagingName('f'.repeat(32))));
  const linked = w.p(stagingName('0'.repeat(32)));
  fs.mkdirSync(linked);
  fs.symlinkSync(`${w.outside}/secret.txt`, `${linked}/state.json`);

  const read = await execute({ op: 'read', path: 'server.properties', worldsRoot: w.root });
  assert.equal(read.code, undefined);
  assert.ok(fs.existsSync(abandoned), 'a read sweeps nothing');
  const refused = await execute({ op: 'mkdir', path: 'config', worldsRoot: w.root });
  assert.equal(refused.code, 'exists');
  assert.ok(fs.existsSync(abandoned), 'a refused mutation changes nothing');

  const r = await execute({ ...writeReq('notes.txt', 'hi\n'), worldsRoot: w.root });
  assert.equal(r.code, undefined, JSON.stringify(r));
  assert.ok(!fs.existsSync(abandoned), 'abandoned past the default idle');
  assert.ok(!fs.existsSync(shortIdle), 'abandoned past its own shorter idle');
  for (const kept of [longIdle, fresh, junk, linked]) assert.ok(fs.existsSync(kept), kept);
  assert.ok(fs.lstatSync(w.p(stagingName('f'.repeat(32)))).isSymbolicLink());
  assert.ok(fs.existsSync(`${w.outside}/secret.txt`));
});

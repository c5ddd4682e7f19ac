import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { makeWorld, sha256, snapshot, type World } from '../../../job/testing/world.ts';
import { REDACTED } from '../../../job/volume/guard.ts';
import { landingOf, newOpId } from './pull.test-kit.ts';
import { EXPIRY_MARGIN_MS, stagingName } from './pull-staging.ts';

const body = Buffer.alloc(70_000, 5);

/** A loopback origin: `/f/<name>` answers `body`; `/props` a server.properties holding a placeholder; `/slow` trickles. */
async function origin() {
  let release: () => void = () => {};
  const released = new Promise<void>((r) => (release = r));
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    if (path.startsWith('/f/')) return void res.writeHead(200, { 'content-length': body.length }).end(body);
    if (path === '/props') return void res.writeHead(200).end(`rcon.password=${REDACTED}\n`);
    if (path === '/slow.bin') {
      res.writeHead(200, { 'content-length': 2 });
      res.write('a');
      void released.then(() => res.end('b'));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    release();
    server.closeAllConnections();
    server.close();
  });
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, release };
}

/** Stages a pull of `url` into `folder` (as the pull Job does); returns its op id and where it lands. */
async function stage(w: World, url: string, folder = 'config', now = Date.now()) {
  const opId = newOpId();
  const r = await w.run({ op: 'pull', path: folder, pull: { url, env: { FELIS_PULL_ALLOW: '127.0.0.1' } } }, { opId, now: () => now });
  assert.equal(r.staged, true, JSON.stringify(r));
  return { opId, ...landingOf(r.to!) };
}

const place = (w: World, s: { opId: string; path: string; to: string }, now?: number) =>
  w.run({ op: 'pull-place', path: s.path, to: s.to, pullOp: s.opId }, now === undefined ? {} : { now: () => now });

test('the placement links the staged file into place, with its bytes, and removes the staging', async () => {
  const o = await origin();
  const w = makeWorld();
  const s = await stage(w, `${o.base}/f/mod.jar`);
  assert.equal(fs.existsSync(w.p(stagingName(s.opId))), true);
  assert.deepEqual(await place(w, s), { files: 1, bytes: body.length, to: 'config/mod.jar' });
  assert.equal(sha256(fs.readFileSync(w.p('config/mod.jar'))), sha256(body));
  assert.equal(fs.statSync(w.p('config/mod.jar')).nlink, 1);
  assert.equal(fs.existsSync(w.p(stagingName(s.opId))), false);
  // Placed once: a second placement finds nothing staged, and says so.
  const again = await place(w, s);
  assert.equal(again.code, 'not_found');
  assert.match(again.error!, /no longer staged/);
});

test('a name taken meanwhile is file_exists (the file there untouched); a placeholder landing as server.properties is refused; either way the staging goes', async () => {
  const o = await origin();
  const w = makeWorld();
  const s = await stage(w, `${o.base}/f/new.bin`);
  fs.writeFileSync(w.p('config/new.bin'), 'written while the pull downloaded');
  const taken = await place(w, s);
  assert.deepEqual([taken.code, taken.error], ['exists', 'config/new.bin already exists']);
  assert.equal(fs.readFileSync(w.p('config/new.bin'), 'utf8'), 'written while the pull downloaded');
  assert.equal(fs.existsSync(w.p(stagingName(s.opId))), false);

  fs.unlinkSync(w.p('server.properties'));
  const props = await stage(w, `${o.base}/props`, '');
  assert.deepEqual([props.path, props.to], ['', 'props']);
  const guarded = { ...props, to: 'server.properties' };
  // The record names what the pull judged: a placement asked for another name is refused.
  const other = await place(w, guarded);
  assert.equal(other.code, 'not_found');
  assert.match(other.error!, /its record says props, not server\.properties/);
  // Staged under the name the landing rule guards: refused at the placement, which is what counts.
  const p2 = newOpId();
  fs.writeFileSync(w.p('server.properties'), 'motd=x\n');
  const r = await w.run({ op: 'pull', path: '', to: 'server.properties', pull: { url: `${o.base}/props`, env: { FELIS_PULL_ALLOW: '127.0.0.1' } } }, { opId: p2 });
  assert.equal(r.code, 'exists', 'a taken name is refused before the download');
  fs.unlinkSync(w.p('server.properties'));
  const staged = await w.run({ op: 'pull', path: '', to: 'server.properties', pull: { url: `${o.base}/props`, env: { FELIS_PULL_ALLOW: '127.0.0.1' } } }, { opId: p2 });
  assert.equal(staged.staged, true, JSON.stringify(staged));
  const refused = await place(w, { opId: p2, path: '', to: 'server.properties' });
  assert.equal(refused.code, 'redacted_value_unknown', JSON.stringify(refused));
  assert.equal(fs.existsSync(w.p('server.properties')), false);
  assert.equal(fs.existsSync(w.p(stagingName(p2))), false);
});

test('a folder gone meanwhile is not_found; a placement stopped after its link is finished by the next, not doubled', async () => {
  const o = await origin();
  const w = makeWorld();
  fs.mkdirSync(w.p('mods'));
  const s = await stage(w, `${o.base}/f/a.jar`, 'mods');
  fs.rmdirSync(w.p('mods'));
  const gone = await place(w, s);
  assert.deepEqual([gone.code, gone.error], ['not_found', 'mods does not exist']);
  assert.equal(fs.existsSync(w.p(stagingName(s.opId))), false);

  const t = await stage(w, `${o.base}/f/b.jar`);
  // As an earlier attempt left it: linked into place, the staging not yet removed.
  fs.linkSync(w.p(`${stagingName(t.opId)}/data`), w.p('config/b.jar'));
  assert.deepEqual(await place(w, t), { files: 1, bytes: body.length, to: 'config/b.jar' });
  assert.equal(fs.statSync(w.p('config/b.jar')).nlink, 1);
  assert.equal(fs.existsSync(w.p(stagingName(t.opId))), false);
});

test('a staging is removed by a holding change only once no placement can start for it; a live pull downloads beside changes untouched', async () => {
  const o = await origin();
  const w = makeWorld();
  const t0 = Date.parse('2026-12-07T12:00:00Z');
  const s = await stage(w, `${o.base}/f/left.jar`, 'config', t0);
  const keep = JSON.parse(fs.readFileSync(w.p(`${stagingName(s.opId)}/pull.json`), 'utf8')).expires - t0;
  assert.equal(keep, (7200 + 1800) * 1000, 'the default: the background Job deadline and the time it stays listed');
  // An upload session's folder (its state.json) and a folder of another kind are never a pull's.
  fs.mkdirSync(w.p('.felis-edit-aaaaaaaaaaaa'), { mode: 0o700 });
  fs.writeFileSync(w.p('.felis-edit-aaaaaaaaaaaa/state.json'), '{}');
  const write = (at: number) => w.run({ op: 'mkdir', path: `d${at}` }, { now: () => at });
  assert.equal((await write(t0 + keep + EXPIRY_MARGIN_MS - 1)).code, undefined);
  assert.equal(fs.existsSync(w.p(stagingName(s.opId))), true, 'kept while a placement may still start');
  assert.equal((await write(t0 + keep + EXPIRY_MARGIN_MS)).code, undefined);
  assert.equal(fs.existsSync(w.p(stagingName(s.opId))), false, 'gone once none can');
  assert.equal(fs.existsSync(w.p('.felis-edit-aaaaaaaaaaaa/state.json')), true);

  // A pull still downloading while other changes run (each holding the world, sweeping what is
  // stale): its staging is its own, and it ends staged with every byte.
  const opId = newOpId();
  const running = w.run({ op: 'pull', path: 'config', pull: { url: `${o.base}/slow.bin`, env: { FELIS_PULL_ALLOW: '127.0.0.1' } } }, { opId });
  while (!fs.existsSync(w.p(`${stagingName(opId)}/data`))) await new Promise((r) => setTimeout(r, 5));
  const before = snapshot(w.p(stagingName(opId)));
  for (const [i, at] of [Date.now(), Date.now() + 2 * 3600_000].entries()) assert.equal((await w.run({ op: 'mkdir', path: `beside${i}` }, { now: () => at })).code, undefined);
  assert.deepEqual(snapshot(w.p(stagingName(opId))), before);
  o.release();
  const r = await running;
  assert.deepEqual(r, { staged: true, bytes: 2, to: 'config/slow.bin' });
  assert.deepEqual(await place(w, { opId, path: 'config', to: 'slow.bin' }), { files: 1, bytes: 2, to: 'config/slow.bin' });
  assert.equal(fs.readFileSync(w.p('config/slow.bin'), 'utf8'), 'ab');
});

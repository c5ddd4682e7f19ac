/**
 * Guarded files stay guarded through the trash: what was the withheld file (or one of its
 * contents) or the root server.properties when it went in goes back only where it was, is listed
 * without its bytes, and is withheld again once back, however many contents the ledger has
 * remembered since.
 */

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import type { Result } from '../../lib/protocol/result.ts';
import { UNDO_DIR } from '../../lib/protocol/working-names.ts';
import type { ExecuteOptions, OpCall } from '../runtime/types.ts';
import { MAX_LEDGER_ENTRIES } from '../runtime/withheld.ts';
import { content, makeWorld, PROPS, SECRET_TEXT, TRASH_ON, type World, writeReq } from '../testing/world.ts';
import { RECORD_FILE } from './record.ts';

function on(w: World, req: OpCall, opts: ExecuteOptions = {}): Promise<Result> {
  return w.run(req, { trash: TRASH_ON, ...opts });
}

async function listed(w: World) {
  const r = await on(w, { op: 'trash-list', path: '' });
  assert.equal(r.code, undefined, r.error);
  return { items: r.trash_items!, bytes: r.trash_bytes! };
}

/** The record does not go back under `to` (nothing made); it does where it was, the withheld file withheld again. */
async function onlyWhereItWas(w: World, id: string): Promise<void> {
  const under = await on(w, { op: 'trash-restore', path: '', trashId: id, to: 'old' });
  assert.equal(under.code, 'bad_path');
  assert.equal(fs.existsSync(w.p('old')), false);
  const back = await on(w, { op: 'trash-restore', path: '', trashId: id });
  assert.equal(back.code, undefined, back.error);
  assert.equal((await w.run({ op: 'read', path: 'config/paper-global.yml' })).code, 'bad_path');
}

test('an overwritten server.properties goes back only to its own name, never under `to`; the listing shows no bytes for it', async () => {
  const w = makeWorld();
  const wr = await on(w, writeReq('server.properties', 'motd=new\n'));
  assert.ok(wr.trash_id);
  const { items, bytes } = await listed(w);
  assert.equal(items[0]!.bytes, 0);
  assert.equal(bytes, 0);
  const under = await on(w, { op: 'trash-restore', path: '', trashId: wr.trash_id, to: 'notes' });
  assert.equal(under.code, 'bad_path');
  assert.match(under.error!, /server\.properties was the server's server\.properties, with its RCON password/);
  assert.equal(fs.existsSync(w.p('notes')), false);
  // Over the new one it is file_exists; once that is deleted it goes back, redacted on read.
  assert.equal((await on(w, { op: 'trash-restore', path: '', trashId: wr.trash_id })).code, 'exists');
  assert.equal((await on(w, { op: 'delete', path: 'server.properties' })).code, undefined);
  const back = await on(w, { op: 'trash-restore', path: '', trashId: wr.trash_id });
  assert.deepEqual(back.restored, ['server.properties']);
  assert.equal(fs.readFileSync(w.p('server.properties'), 'utf8'), PROPS);
  assert.doesNotMatch(content(await w.run({ op: 'read', path: 'server.properties' })).toString(), /hunter2/);
});

test('the withheld file overwritten 66 times: its oldest content never comes back readable', async () => {
  const w = makeWorld();
  const ids: string[] = [];
  for (let i = 0; i <= MAX_LEDGER_ENTRIES + 1; i++) {
    const r = await on(w, writeReq('config/paper-global.yml', `proxies:\n  velocity:\n    secret: s-${i}\n`));
    assert.equal(r.code, undefined, r.error);
    ids.push(r.trash_id!);
  }
  const oldest = ids[0]!;
  const { items } = await listed(w);
  const item = items.find((i) => i.id === oldest)!;
  assert.equal(item.bytes, 0, 'listed without its bytes');
  const under = await on(w, { op: 'trash-restore', path: '', trashId: oldest, to: 'restored' });
  assert.equal(under.code, 'bad_path');
  assert.match(under.error!, /held the proxy forwarding secret/);
  assert.equal(fs.existsSync(w.p('restored')), false);
  // Put back where it was (the current file deleted first): the withheld name again.
  assert.equal((await on(w, { op: 'delete', path: 'config/paper-global.yml' })).code, undefined);
  const back = await on(w, { op: 'trash-restore', path: '', trashId: oldest });
  assert.deepEqual(back.restored, ['config/paper-global.yml']);
  assert.equal(fs.readFileSync(w.p('config/paper-global.yml'), 'utf8'), SECRET_TEXT);
  assert.equal((await w.run({ op: 'read', path: 'config/paper-global.yml' })).code, 'bad_path');
});

test('a folder holding a copy of the secret comes back only where it was, and its copy is withheld again though the ledger forgot it', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('plugins/velocity'), { recursive: true });
  fs.writeFileSync(w.p('plugins/velocity/forwarding.secret'), SECRET_TEXT);
  fs.writeFileSync(w.p('plugins/velocity/config.toml'), 'bind = "0.0.0.0"\n');
  const del = await on(w, { op: 'delete', path: 'plugins' });
  assert.ok(del.trash_id);
  const { items } = await listed(w);
  assert.equal(items[0]!.bytes, 'bind = "0.0.0.0"\n'.length, 'the copy of the secret is not counted');
  assert.equal((await on(w, { op: 'trash-restore', path: '', trashId: del.trash_id, to: 'x' })).code, 'bad_path');
  // 65 new contents push the secret's out of the ledger, and the file itself changes too.
  for (let i = 0; i <= MAX_LEDGER_ENTRIES; i++) await on(w, writeReq('config/paper-global.yml', `secret-${i}\n`));
  const back = await on(w, { op: 'trash-restore', path: '', trashId: del.trash_id });
  assert.equal(back.code, undefined, back.error);
  const read = await w.run({ op: 'read', path: 'plugins/velocity/forwarding.secret' });
  assert.equal(read.code, 'bad_path', 'remembered again when it was put back');
  assert.equal(content(await w.run({ op: 'read', path: 'plugins/velocity/config.toml' })).toString(), 'bind = "0.0.0.0"\n');
});

test('a hard link to server.properties inside a deleted folder is not kept (the file lives on at its name)', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('stash'));
  fs.linkSync(w.p('server.properties'), w.p('stash/props'));
  fs.writeFileSync(w.p('stash/note.txt'), 'n');
  const del = await on(w, { op: 'delete', path: 'stash' });
  const { items } = await listed(w);
  assert.equal(items[0]!.entries, 2, 'the folder and note.txt');
  assert.equal(fs.statSync(w.p('server.properties')).nlink, 1);
  const back = await on(w, { op: 'trash-restore', path: '', trashId: del.trash_id, to: 'here' });
  assert.equal(back.code, undefined, back.error);
  assert.deepEqual(fs.readdirSync(w.p('here/stash')).sort(), ['note.txt']);
});

test('a record made before items were judged is judged when restored: the withheld file does not go under `to`', async () => {
  const w = makeWorld();
  const del = await on(w, { op: 'delete', path: 'config' });
  assert.ok(del.trash_id);
  // As an older program sealed it: no guard, not judged.
  const file = `${w.p(UNDO_DIR)}/${del.trash_id}/${RECORD_FILE}`;
  const r = JSON.parse(fs.readFileSync(file, 'utf8'));
  delete r.judged;
  for (const i of r.items) delete i.guard, delete i.withheld;
  fs.writeFileSync(file, JSON.stringify(r));
  await onlyWhereItWas(w, del.trash_id!);
});

test('a copy of server.properties under another name carries the redacted text; a move of it is refused', async () => {
  const w = makeWorld();
  const copy = await w.run({ op: 'copy', path: 'server.properties', to: 'notes.properties' });
  assert.equal(copy.code, undefined, copy.error);
  assert.doesNotMatch(fs.readFileSync(w.p('notes.properties'), 'utf8'), /hunter2/);
  const move = await w.run({ op: 'rename', path: 'server.properties', to: 'elsewhere.properties' });
  assert.equal(move.code, 'bad_path');
  assert.equal(fs.readFileSync(w.p('server.properties'), 'utf8'), PROPS);
});

test('a many-file delete holding the withheld file and server.properties: one record, neither goes back under `to`', async () => {
  const w = makeWorld();
  const del = await on(w, { op: 'delete-many', path: '', batch: { paths: ['config', 'server.properties'] } });
  assert.equal(del.code, undefined, del.error);
  const { items } = await listed(w);
  assert.equal(items.length, 1);
  assert.equal(items[0]!.bytes, 'paper: true\n'.length, 'only config/paper.yml is counted');
  await onlyWhereItWas(w, del.trash_id!);
  assert.doesNotMatch(content(await w.run({ op: 'read', path: 'server.properties' })).toString(), /hunter2/);
});

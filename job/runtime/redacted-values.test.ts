/**
 * The root server.properties keeps its redacted values through every way new content reaches it:
 * the write op (what a one-shot Job, an edit session and the env fallback all run), a single upload,
 * an upload session's commit, an extraction, a pull and a trash restore.
 */

import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import { pulled } from '../../functions/files-pull/job/pull.test-kit.ts';
import { UNDO_DIR } from '../../lib/protocol/working-names.ts';
import { forgeZip } from '../archive/forge.test-kit.ts';
import { openContext } from '../op-kit/context.ts';
import { content, makeWorld, PROPS, sha256, TRASH_ON, type World, writeReq } from '../testing/world.ts';
import { RECORD_FILE } from '../trash/record.ts';
import { landUpload } from '../upload/land.ts';
import { UploadSession } from '../upload/session.ts';
import { keepRedactedValues, REDACTED } from '../volume/guard.ts';

const keep = (disk: string | null, sent: string) => {
  const r = keepRedactedValues(disk === null ? null : Buffer.from(disk), Buffer.from(sent));
  return 'bytes' in r ? r.bytes.toString() : { unknown: r.unknown };
};

test('a placeholder line gets the value on disk; a read sent back unchanged is the disk byte for byte', () => {
  const disk = 'motd=hi\r\n  rcon.password=hunter2\r\nforwarding-secrets=abc\nmax-players=20\n';
  // What a read shows: leading spaces and the CR of a redacted line go.
  const shown = `motd=hi\r\nrcon.password=${REDACTED}\nforwarding-secrets=${REDACTED}\nmax-players=20\n`;
  assert.equal(keep(disk, shown), disk);
  assert.equal(keep(disk, shown.replace('max-players=20', 'max-players=50')), disk.replace('max-players=20', 'max-players=50'));
  // A placeholder the caller framed in its own way keeps its framing around the value.
  assert.equal(keep(disk, `\trcon.password=${REDACTED}\r\n`), '\trcon.password=hunter2\r\n');
  // The last line for a key is its value, as Java's Properties reads the file.
  assert.equal(keep('rcon.password=old\nrcon.password=new\n', `rcon.password=${REDACTED}`), 'rcon.password=new');
  // An empty value on disk is a value.
  assert.equal(keep('rcon.password=\n', `rcon.password=${REDACTED}\n`), 'rcon.password=\n');
  // Only an exact placeholder is one; anything else is written as sent.
  const typed = `rcon.password=${REDACTED}x\n#rcon.password=${REDACTED}\nmotd=${REDACTED}\nrcon.password=s3cret\n`;
  assert.equal(keep(disk, typed), typed);
});

test('a placeholder for a key the disk has no value for, or with no file, is unknown', () => {
  assert.deepEqual(keep('motd=hi\n', `motd=x\nforwarding-secrets=${REDACTED}\n`), { unknown: 'forwarding-secrets' });
  assert.deepEqual(keep(null, `rcon.password=${REDACTED}`), { unknown: 'rcon.password' });
  // Content without a placeholder needs no file.
  assert.equal(keep(null, 'rcon.password=mine\n'), 'rcon.password=mine\n');
});

/** What a read of server.properties shows, with one line changed. */
async function shownProps(w: World, from: string, to: string): Promise<string> {
  const r = await w.run({ op: 'read', path: 'server.properties' });
  assert.equal(r.code, undefined, r.error);
  const text = content(r).toString();
  assert.match(text, /rcon\.password=<redacted by felis>/);
  return text.replace(from, to);
}

test('write: the edit flow (read, change a line, write back) keeps the RCON password; the answer hashes what was written', async () => {
  const w = makeWorld();
  const sent = await shownProps(w, 'motd=hi', 'motd=edited');
  const expect = sha256(PROPS);
  const r = await w.run(writeReq('server.properties', sent, { expectSha256: expect }));
  assert.equal(r.code, undefined, r.error);
  const disk = fs.readFileSync(w.p('server.properties'), 'utf8');
  assert.equal(disk, PROPS.replace('motd=hi', 'motd=edited'));
  assert.equal(r.sha256, sha256(disk));
  // Through a hard link to it (the same file by identity, as a read redacts it), then a link to it.
  fs.linkSync(w.p('server.properties'), w.p('config/props-hard'));
  fs.symlinkSync('server.properties', w.p('props-link'));
  for (const name of ['config/props-hard', 'props-link']) {
    const again = await w.run(writeReq(name, sent.replace('edited', name)));
    assert.equal(again.code, undefined, again.error);
    assert.match(fs.readFileSync(w.p(name), 'utf8'), /^rcon\.password=hunter2$/m, name);
  }
});

test('write: a placeholder for a key the file lacks, or for a server.properties not there, is refused and writes nothing', async () => {
  const w = makeWorld();
  const r = await w.run(writeReq('server.properties', `motd=x\nforwarding-secrets=${REDACTED}\n`));
  assert.equal(r.code, 'redacted_value_unknown');
  assert.match(r.error!, /forwarding-secrets=<redacted by felis> stands for the value on disk/);
  assert.equal(fs.readFileSync(w.p('server.properties'), 'utf8'), PROPS);
  fs.unlinkSync(w.p('server.properties'));
  const fresh = await w.run(writeReq('server.properties', `rcon.password=${REDACTED}\n`));
  assert.equal(fresh.code, 'redacted_value_unknown');
  assert.equal(fs.existsSync(w.p('server.properties')), false);
  // A dangling link at the name leads to where the file would be made: the same rule.
  fs.symlinkSync('config/real.properties', w.p('server.properties'));
  const through = await w.run(writeReq('config/real.properties', `rcon.password=${REDACTED}\n`));
  assert.equal(through.code, 'redacted_value_unknown');
  assert.equal(fs.existsSync(w.p('config/real.properties')), false);
  // Any other file takes the text as it is.
  const other = await w.run(writeReq('notes.txt', `rcon.password=${REDACTED}\n`));
  assert.equal(other.code, undefined, other.error);
  assert.equal(fs.readFileSync(w.p('notes.txt'), 'utf8'), `rcon.password=${REDACTED}\n`);
});

test('a single upload of the shown text keeps the password and answers the digest of what landed', async () => {
  const w = makeWorld();
  const sent = Buffer.from(await shownProps(w, 'server-port=25565', 'server-port=25566'));
  const ctx = openContext(w.root, { trash: TRASH_ON });
  try {
    const l = await landUpload(ctx, { path: 'server.properties', size: sent.length, sha256: sha256(sent), overwrite: true }, Readable.from([sent]));
    assert.equal(l.kind, 'result');
    const r = (l as { result: { sha256?: string; code?: string; error?: string } }).result;
    assert.equal(r.code, undefined, r.error);
    const disk = fs.readFileSync(w.p('server.properties'));
    assert.equal(disk.toString(), PROPS.replace('25565', '25566'));
    assert.equal(r.sha256, sha256(disk));
    const refused = Buffer.from(`forwarding-secrets=${REDACTED}\n`);
    const l2 = await landUpload(ctx, { path: 'server.properties', size: refused.length, sha256: sha256(refused), overwrite: true }, Readable.from([refused]));
    assert.equal((l2 as { result: { code?: string } }).result.code, 'redacted_value_unknown');
    assert.equal(fs.readFileSync(w.p('server.properties')).toString(), PROPS.replace('25565', '25566'));
    assert.deepEqual(
      fs.readdirSync(w.root).filter((n) => n.startsWith('.felis-edit-') && n !== UNDO_DIR && !n.includes('withheld')),
      [],
      'no working file is left',
    );
  } finally {
    ctx.root.close();
  }
});

test('an upload session committed onto server.properties keeps the password', async () => {
  const w = makeWorld();
  const sent = Buffer.from(await shownProps(w, 'motd=hi', 'motd=session'));
  const ctx = openContext(w.root);
  try {
    const s = UploadSession.begin(ctx, '0123456789abcdef0123456789abcdef', 'server.properties', sent.length);
    await s.append(ctx, 0, sent.length, sha256(sent), Readable.from([sent]));
    const r = await s.commit(ctx, true);
    assert.equal(r.code, undefined, r.error);
    const disk = fs.readFileSync(w.p('server.properties'));
    assert.equal(disk.toString(), PROPS.replace('motd=hi', 'motd=session'));
    assert.equal(r.sha256, sha256(disk));
  } finally {
    ctx.root.close();
  }
});

test('an extraction over server.properties keeps the password; one with a value it cannot keep places nothing', async () => {
  const w = makeWorld();
  const shown = await shownProps(w, 'motd=hi', 'motd=from-zip');
  fs.writeFileSync(
    w.p('pack.zip'),
    forgeZip([
      { name: 'server.properties', data: shown },
      { name: 'extra.txt', data: 'x' },
    ]),
  );
  const r = await w.run({ op: 'unzip', path: 'pack.zip', overwrite: true });
  assert.equal(r.code, undefined, r.error);
  assert.equal(fs.readFileSync(w.p('server.properties'), 'utf8'), PROPS.replace('motd=hi', 'motd=from-zip'));
  fs.writeFileSync(
    w.p('bad.zip'),
    forgeZip([
      { name: 'server.properties', data: `forwarding-secrets=${REDACTED}\n` },
      { name: 'other.txt', data: 'y' },
    ]),
  );
  const bad = await w.run({ op: 'unzip', path: 'bad.zip', overwrite: true });
  assert.equal(bad.code, 'redacted_value_unknown');
  assert.equal(bad.entry, 'server.properties');
  assert.equal(fs.existsSync(w.p('other.txt')), false, 'nothing of it was placed');
  assert.equal(fs.readFileSync(w.p('server.properties'), 'utf8'), PROPS.replace('motd=hi', 'motd=from-zip'));
});

test('a pull that would make server.properties with a placeholder is refused and places nothing', async () => {
  const server = http.createServer((_q, res) => res.writeHead(200).end(`rcon.password=${REDACTED}\n`));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/server.properties`;
  const w = makeWorld();
  fs.unlinkSync(w.p('server.properties'));
  const r = await pulled(w, { op: 'pull', path: '', pull: { url, env: { FELIS_PULL_ALLOW: '127.0.0.1' } } });
  assert.equal(r.code, 'redacted_value_unknown');
  assert.equal(fs.existsSync(w.p('server.properties')), false);
  // Elsewhere the same bytes are just a file.
  const elsewhere = await pulled(w, { op: 'pull', path: 'config', pull: { url, env: { FELIS_PULL_ALLOW: '127.0.0.1' } } });
  assert.equal(elsewhere.code, undefined, elsewhere.error);
});

test('a trash restore that would make server.properties hold a placeholder is refused', async () => {
  const w = makeWorld();
  const opts = { trash: TRASH_ON };
  // A server.properties holding a placeholder (as one written before values were kept), trashed.
  fs.writeFileSync(w.p('server.properties'), `rcon.password=${REDACTED}\n`);
  const del = await w.run({ op: 'delete', path: 'server.properties' }, opts);
  assert.ok(del.trash_id);
  const r = await w.run({ op: 'trash-restore', path: '', trashId: del.trash_id }, opts);
  assert.equal(r.code, 'redacted_value_unknown');
  assert.equal(fs.existsSync(w.p('server.properties')), false);
  assert.ok(fs.existsSync(`${w.p(UNDO_DIR)}/${del.trash_id}/${RECORD_FILE}`), 'the record is still held');
});

test('a file moved or copied to a free server.properties must hold no placeholder', async () => {
  const w = makeWorld();
  fs.unlinkSync(w.p('server.properties'));
  fs.writeFileSync(w.p('config/shown.properties'), `motd=x\nrcon.password=${REDACTED}\n`);
  const moved = await w.run({ op: 'rename', path: 'config/shown.properties', to: 'server.properties' });
  assert.equal(moved.code, 'redacted_value_unknown');
  const copied = await w.run({ op: 'copy', path: 'config/shown.properties', to: 'server.properties' });
  assert.equal(copied.code, 'redacted_value_unknown');
  assert.equal(fs.existsSync(w.p('server.properties')), false);
  assert.ok(fs.existsSync(w.p('config/shown.properties')));
  // With its values written out, it may become the server's properties either way.
  fs.writeFileSync(w.p('config/shown.properties'), 'motd=x\nrcon.password=mine\n');
  const ok = await w.run({ op: 'copy', path: 'config/shown.properties', to: 'server.properties' });
  assert.equal(ok.code, undefined, ok.error);
  assert.equal(fs.readFileSync(w.p('server.properties'), 'utf8'), 'motd=x\nrcon.password=mine\n');
});

test('a many-file move onto a free server.properties of a file with a placeholder moves nothing', async () => {
  const w = makeWorld();
  fs.unlinkSync(w.p('server.properties'));
  fs.writeFileSync(w.p('config/shown.properties'), `rcon.password=${REDACTED}\n`);
  fs.writeFileSync(w.p('a.txt'), 'a');
  const r = await w.run({
    op: 'move-many',
    path: '',
    batch: {
      moves: [
        { from: 'a.txt', to: 'config/a.txt' },
        { from: 'config/shown.properties', to: 'server.properties' },
      ],
    },
  });
  assert.equal(r.code, 'redacted_value_unknown');
  assert.ok(fs.existsSync(w.p('a.txt')), 'nothing of the batch moved');
  assert.equal(fs.existsSync(w.p('server.properties')), false);
});

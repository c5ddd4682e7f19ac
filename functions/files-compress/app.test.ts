import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MaintenanceBusyError } from '../../lib/maintenance/errors.ts';
import { startedView } from '../../lib/ops/view.ts';
import { decodeBatchEnv } from '../../lib/protocol/batch-env.ts';
import { backgroundKit, deliverer, realEditorKit } from '../../lib/testing/background-kit.ts';
import { envelopeOf } from '../../lib/testing/route-kit.ts';
import { filesCompress } from './app.ts';

const kit = () => backgroundKit(filesCompress, { start: (req) => startedView('00000000000000cc', 'compress', req.path, new Date('2026-12-02T06:00:00Z')) });

const URL = '/api/v1/servers/survival/files/compress';

test('compress packs a selection in the background under the world lock: 202 with the running op, the folder as its path, audited', async () => {
  const k = kit();
  const r = await k.call('POST', URL, { paths: ['plugins/Essentials', './plugins/ViaVersion.jar', 'plugins/empty/'], format: 'tar.zst', name: 'plugins.TAR.ZST' });
  assert.equal(r.status, 202, r.text);
  assert.deepEqual(r.body, { op: { id: '00000000000000cc', op: 'compress', path: 'plugins', state: 'running', started_at: '2026-12-02T06:00:00Z', done: 0, total: 0 } });
  assert.deepEqual(k.starts, [
    { req: { op: 'compress', path: 'plugins', batch: { paths: ['plugins/Essentials', 'plugins/ViaVersion.jar', 'plugins/empty'] }, format: 'tar.zst', to: 'plugins.TAR.ZST' }, locked: true },
  ]);
  assert.deepEqual(k.gates.ran, [{ server: 'survival', access: { op: 'compress', path: '.' } }]);
  const [a] = k.audits();
  assert.equal(a!.action, 'file.compress');
  assert.deepEqual(a!.payload, { paths: ['plugins/Essentials', 'plugins/ViaVersion.jar', 'plugins/empty'], format: 'tar.zst', name: 'plugins.TAR.ZST', op: '00000000000000cc' });
});

test('without a name the archive is archive-<UTC yyyy-mm-ddThhmmss>.<ending>, named at the request; paths at the root are in "."', async () => {
  for (const [format, ending] of [
    ['zip', '.zip'],
    ['tar.gz', '.tar.gz'],
    ['tar.xz', '.tar.xz'],
    ['tar.zst', '.tar.zst'],
  ] as const) {
    const k = kit();
    const before = Math.floor(Date.now() / 1000) * 1000;
    const r = await k.call('POST', URL, { paths: ['world', 'world_nether'], format });
    assert.equal(r.status, 202, r.text);
    const req = k.starts[0]!.req;
    assert.equal(req.path, '.');
    const m = /^archive-(\d{4}-\d\d-\d\d)T(\d\d)(\d\d)(\d\d)(\.[a-z.]+)$/.exec(req.to!);
    assert.ok(m, req.to);
    assert.equal(m[5], ending);
    const at = Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}Z`);
    assert.ok(at >= before && at <= Date.now(), req.to);
  }
});

test('every refusal is a 400 with a precise code before the lock and any Job', async () => {
  const many = Array.from({ length: 1001 }, (_, i) => `logs/${i}.log`);
  const cases: Array<[unknown, string, RegExp, string?]> = [
    [{ paths: ['plugins/a', 'config/b'], format: 'zip' }, 'mixed_folders', /one folder: config\/b is in config, the first path in plugins/, 'config/b'],
    [{ paths: ['a', 'plugins/a'], format: 'zip' }, 'mixed_folders', /one folder/, 'plugins/a'],
    [{ paths: ['plugins/a', 'plugins/a/'], format: 'zip' }, 'bad_path', /named twice/, 'plugins/a/'],
    [{ paths: ['.'], format: 'zip' }, 'bad_path', /^"\.": the path names the world folder itself/, '.'],
    [{ paths: ['/'], format: 'zip' }, 'bad_path', /^"\/": the path names the world folder itself/, '/'],
    [{ paths: ['../x'], format: 'zip' }, 'bad_path', /^"\.\.\/x": the path leads out of the world$/, '../x'],
    [{ paths: ['/../x'], format: 'zip' }, 'bad_path', /^"\/\.\.\/x": the path leads out of the world$/, '/../x'],
    [{ paths: ['plugins/.felis-edit-0123456789ab'], format: 'zip' }, 'bad_path', /working file/, 'plugins/.felis-edit-0123456789ab'],
    [{ paths: ['a\u0000b'], format: 'zip' }, 'bad_path', /NUL/, 'a\u0000b'],
    [{ paths: ['a'], format: 'zip', name: 'a.tar.gz' }, 'bad_name', /must end in \.zip/],
    [{ paths: ['a'], format: 'tar.gz', name: 'a.zip' }, 'bad_name', /must end in \.tar\.gz or \.tgz/],
    [{ paths: ['a'], format: 'tar.xz', name: '.tar.xz' }, 'bad_name', /must end in/],
    [{ paths: ['a'], format: 'tar.zst', name: 'x/a.tar.zst' }, 'bad_name', /must be one name, without a slash/],
    [{ paths: ['a'], format: 'tar.zst', name: `${'x'.repeat(248)}.tar.zst` }, 'bad_name', /longer than 255 bytes/],
    [{ paths: ['a'], format: 'zip', name: 'photo\u202egpj.zip' }, 'bad_name', /^the archive name "photo<U\+202E>gpj\.zip" holds a bidirectional control character \(U\+202E\)/],
    [{ paths: ['a'], format: 'zip', name: 'tab\t.zip' }, 'bad_name', /holds a control character \(U\+0009\)/],
    [{ paths: ['a'], format: 'rar' }, 'bad_request', /format must be one of zip, tar\.gz, tar\.xz, tar\.zst/],
    [{ paths: ['a'] }, 'bad_request', /format/],
    [{ paths: [], format: 'zip' }, 'bad_request', /at least one/],
    [{ paths: many, format: 'zip' }, 'bad_request', /at most 1000/],
    [{ paths: 'a', format: 'zip' }, 'bad_request', /list/],
    [{ paths: ['a'], format: 'zip', name: 7 }, 'bad_request', /name/],
    [{ paths: ['a'], format: 'zip', to: 'x.zip' }, 'bad_request', /unrecognized|to/i],
    [undefined, 'bad_request', /a JSON body is required/],
  ];
  for (const [body, code, msg, path] of cases) {
    const k = kit();
    const r = await k.call('POST', URL, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(envelopeOf(r).code, code, JSON.stringify(body));
    assert.match(envelopeOf(r).message, msg, JSON.stringify(body));
    if (path !== undefined) assert.equal(r.body.error.path, path, JSON.stringify(body));
    assert.equal(k.gates.ran.length, 0);
    assert.equal(k.starts.length, 0);
  }
  assert.equal((await kit().call('POST', URL, { paths: ['a'], format: 'tar.zst', name: `${'x'.repeat(247)}.tar.zst` })).status, 202, 'a 255-byte name is fine');
  assert.equal((await kit().call('POST', URL, { paths: ['a'], format: 'tar.gz', name: 'a.TGZ' })).status, 202, 'the short ending too');
});

test('compress needs a free world; a busy one is 409 naming the holder, nothing started or audited', async () => {
  const busy = kit();
  busy.gates.runError = new MaintenanceBusyError('file-write');
  const b = await busy.call('POST', URL, { paths: ['world'], format: 'zip' });
  assert.equal(b.status, 409);
  assert.equal(envelopeOf(b).code, 'maintenance_in_progress');
  assert.equal(busy.starts.length, 0);
  assert.equal(busy.audits().length, 0);
});

test('through the real editor: one background Job with the folder, format and name on its command line and the selection in its env; a redelivered event answers the same op', async () => {
  const k = realEditorKit(filesCompress);
  const jobs = k.jobs;
  const send = deliverer(k, 'dev.felis.files.compress');
  const deliver = (id: string, body: object) => send(id, { server: 'survival', body });
  const body = { paths: ['plugins/a', 'plugins/b.jar'], format: 'tar.xz' };
  const first = await deliver('ev-1', body);
  assert.equal(first.status, 202, JSON.stringify(first.body));
  assert.deepEqual([first.body.op.op, first.body.op.path], ['compress', 'plugins']);
  assert.equal(jobs.jobs.length, 1);
  const c = jobs.jobs[0]!.spec!.template.spec!.containers[0]!;
  assert.deepEqual(c.args!.slice(0, 8), ['--op', 'compress', '--path', 'plugins', '--worlds-root', '/data', '--format', 'tar.xz']);
  assert.match(c.args![9]!, /^archive-\d{4}-\d\d-\d\dT\d{6}\.tar\.xz$/);
  const env = Object.fromEntries(c.env!.map((e) => [e.name, e.value]));
  assert.deepEqual(decodeBatchEnv('compress', env), { paths: ['plugins/a', 'plugins/b.jar'] });
  const again = await deliver('ev-1', body);
  assert.equal(again.status, 202);
  assert.deepEqual(again.body, first.body);
  assert.equal(jobs.jobs.length, 1, 'no second Job');
  const reused = await deliver('ev-1', { ...body, format: 'zip' });
  assert.equal(reused.status, 409);
  assert.equal(reused.body.error.code, 'event_conflict');
});

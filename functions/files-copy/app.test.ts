import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FilesEditor } from '../../lib/files/editor.ts';
import { FileEditError } from '../../lib/files/errors.ts';
import { MaintenanceBusyError } from '../../lib/maintenance/errors.ts';
import type { StartRequest } from '../../lib/ops/background.ts';
import { startedView } from '../../lib/ops/view.ts';
import { envelopeOf, FakeGates, routeKit, TOKEN } from '../../lib/testing/route-kit.ts';
import { filesCopy } from './app.ts';
import type { Copied } from './result.ts';

const SHA = 'a'.repeat(64);

/** `sync` is what the sync copy Job answers: a copy, or a refusal (too_large: not a small file). */
function kit(sync: (path: string, to: string | undefined) => Copied | Error) {
  const gates = new FakeGates();
  const copies: Array<{ path: string; to: string | undefined; locked: boolean }> = [];
  const starts: Array<{ req: StartRequest; locked: boolean }> = [];
  const editor = {
    async earlierOp() {
      return undefined;
    },
    async copy(_t: unknown, path: string, to: string | undefined) {
      copies.push({ path, to, locked: gates.holding });
      const r = sync(path, to);
      if (r instanceof Error) throw r;
      return r;
    },
    async start(_t: unknown, req: StartRequest) {
      starts.push({ req, locked: gates.holding });
      return startedView('00000000000000cc', 'copy', req.path, new Date('2026-12-01T06:00:00Z'));
    },
  } as unknown as FilesEditor;
  return { ...routeKit(filesCopy, { gates, editor }), copies, starts };
}

const URL = (p: string) => `/api/v1/servers/survival/files/copy?path=${encodeURIComponent(p)}`;
const copied = (to: string): Copied => ({ to, sha256: SHA, files: 1, bytes: 5, skipped: 0 });

test('a small file is copied while the caller waits, under the world lock: 200 with the copy, audited; one Job', async () => {
  const k = kit(() => copied('notes copy.txt'));
  const r = await k.call('POST', URL('notes.txt'), {});
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { path: 'notes.txt', to: 'notes copy.txt', status: 'copied', sha256: SHA });
  assert.deepEqual(k.copies, [{ path: 'notes.txt', to: undefined, locked: true }]);
  assert.equal(k.starts.length, 0);
  const [a] = k.audits();
  assert.equal(a!.action, 'file.copy');
  assert.deepEqual(a!.payload, { to: 'notes copy.txt' });
});

test('a folder or a big file (the sync Job refuses it as too large) goes to the background: 202 {op}', async () => {
  const k = kit(() => new FileEditError('too_large', 'plugins is a folder'));
  const r = await k.call('POST', URL('plugins'), { to: 'backups/plugins' });
  assert.equal(r.status, 202, r.text);
  assert.deepEqual(r.body, { op: { id: '00000000000000cc', op: 'copy', path: 'plugins', state: 'running', started_at: '2026-12-01T06:00:00Z', done: 0, total: 0 } });
  assert.deepEqual(k.starts, [{ req: { op: 'copy', path: 'plugins', to: 'backups/plugins' }, locked: true }]);
  const [a] = k.audits();
  assert.deepEqual(a!.payload, { to: 'backups/plugins', op: '00000000000000cc' });
});

test("the Job's refusals keep their codes: missing, exists, full volume, bad path; nothing starts in the background", async () => {
  const cases: Array<[FileEditError, number, string]> = [
    [new FileEditError('not_found'), 404, 'not_found'],
    [new FileEditError('exists'), 409, 'file_exists'],
    [new FileEditError('no_space'), 507, 'volume_full'],
    [new FileEditError('bad_path'), 400, 'bad_path'],
  ];
  for (const [err, status, code] of cases) {
    const k = kit(() => err);
    const r = await k.call('POST', URL('a.txt'), { to: 'b.txt' });
    assert.equal(r.status, status, r.text);
    assert.equal(envelopeOf(r).code, code);
    assert.equal(k.starts.length, 0);
    assert.equal(k.audits().length, 0);
  }
});

test('a to that plainly escapes, names a working file or breaks the name rule is refused before the lock; the body is strict', async () => {
  const cases: Array<[unknown, string]> = [
    [{ to: `d/${'n'.repeat(300)}.txt` }, 'bad_path'],
    [{ to: 'x'.repeat(4097) }, 'bad_path'],
    [{ to: 'copies/bell\u0007.txt' }, 'bad_path'],
    [{ to: 'copies/evil\u202etxt.exe' }, 'bad_path'],
    [{ to: '../x' }, 'bad_path'],
    [{ to: '/../x' }, 'bad_path'],
    [{ to: '/' }, 'bad_path'],
    [{ to: 'a/../../x' }, 'bad_path'],
    [{ to: '' }, 'bad_path'],
    [{ to: '.' }, 'bad_path'],
    [{ to: '.felis-edit-0123456789ab' }, 'bad_path'],
    [{ to: 'a\u0000b' }, 'bad_path'],
    [{ to: 7 }, 'bad_request'],
    [{ name: 'x' }, 'bad_request'],
  ];
  for (const [body, code] of cases) {
    const k = kit(() => copied('x'));
    const r = await k.call('POST', URL('a.txt'), body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(envelopeOf(r).code, code, JSON.stringify(body));
    assert.equal(k.gates.ran.length, 0);
    assert.equal(k.copies.length + k.starts.length, 0);
  }
});

test('copy needs a path and a free world', async () => {
  const k = kit(() => copied('x'));
  const r = await k.call('POST', '/api/v1/servers/survival/files/copy', {});
  assert.equal(r.status, 400);
  assert.equal(envelopeOf(r).code, 'bad_request');
  const busy = kit(() => copied('x'));
  busy.gates.runError = new MaintenanceBusyError('file-write');
  const b = await busy.call('POST', URL('a.txt'), {});
  assert.equal(b.status, 409);
  assert.equal(envelopeOf(b).code, 'maintenance_in_progress');
  assert.equal(busy.copies.length + busy.starts.length, 0);
  assert.equal(busy.audits().length, 0);
});

test('a redelivered event whose first delivery went to the background answers that op again, running nothing', async () => {
  const earlier = startedView('00000000000000dd', 'copy', 'plugins', new Date('2026-12-01T06:00:00Z'));
  const r = await routeKit(filesCopy, {
    gates: new FakeGates(),
    editor: { earlierOp: async () => earlier, copy: async () => assert.fail('no sync copy'), start: async () => assert.fail('no start') } as unknown as FilesEditor,
  }).call('POST', URL('plugins'), {});
  assert.equal(r.status, 202, r.text);
  assert.equal(r.body.op.id, '00000000000000dd');
});

/** A browse session that serves: it answers a listing of `entries` (by name filter) and records how it was asked. */
function withBrowse(k: ReturnType<typeof kit>, entries: object[] | string | undefined) {
  const asked: unknown[] = [];
  k.deps.browse = {
    run: async (_t, op, path, _s, _e, query, o) => {
      asked.push({ op, path, query, o });
      if (entries === undefined || typeof entries === 'string') return entries;
      return JSON.stringify({ entries: entries.filter((e) => (e as { name: string }).name.toLowerCase().includes(query!.q!.toLowerCase())), truncated: false, avail: 9 });
    },
  };
  (k.deps.editor as unknown as { copySyncMaxBytes: number }).copySyncMaxBytes = 1000;
  return asked;
}

const entry = (name: string, o: { dir?: boolean; size?: number; link?: boolean } = {}) => ({
  name,
  size: o.size ?? 0,
  is_dir: o.dir ?? false,
  mod_time: '2026-12-01T06:00:00Z',
  mode: '755',
  is_symlink: o.link ?? false,
});

test('with a browse session serving, a folder or a file over the sync limit goes straight to the background: no sync Job, the session is never started for it', async () => {
  for (const [path, entries] of [
    ['plugins/Essentials/', [entry('Essentials', { dir: true }), entry('EssentialsChat', { dir: true })]],
    ['world.tar', [entry('world.tar', { size: 1001 })]],
  ] as const) {
    const k = kit(() => new FileEditError('too_large', 'not small'));
    const asked = withBrowse(k, [...entries]);
    const r = await k.call('POST', URL(path), {});
    assert.equal(r.status, 202, r.text);
    assert.equal(k.copies.length, 0, `${path}: no refused sync Job`);
    assert.equal(k.starts.length, 1);
    assert.equal(k.starts[0]!.locked, true);
    const folder = path === 'world.tar' ? '' : 'plugins';
    const name = path === 'world.tar' ? 'world.tar' : 'Essentials';
    assert.deepEqual(asked, [{ op: 'list', path: folder, query: { q: name, limit: 5000 }, o: { start: false } }]);
  }
});

test('a copy with a to always runs the sync Job first, session or not: it judges the destination, and its refusal is the answer at once', async () => {
  const k = kit(() => new FileEditError('exists', 'config already exists'));
  const asked = withBrowse(k, [entry('plugins', { dir: true })]);
  const r = await k.call('POST', URL('plugins'), { to: 'config' });
  assert.equal(r.status, 409, r.text);
  assert.equal(envelopeOf(r).code, 'file_exists');
  assert.deepEqual(asked, [], 'the session is not asked');
  assert.equal(k.copies.length, 1);
  assert.equal(k.starts.length, 0);
});

test('a small file, a link, an entry not listed, a refusal or no serving session: the sync Job decides, as without a session', async () => {
  const cases: Array<[string, object[] | string | undefined]> = [
    ['small', [entry('a.txt', { size: 1000 })]],
    ['a link to a folder', [entry('a.txt', { dir: true, link: true })]],
    ['a link to a big file', [entry('a.txt', { size: 5000, link: true })]],
    ['another name only', [entry('a.txt.bak', { dir: true }), entry('A.TXT', { dir: true })]],
    ['a refusal', JSON.stringify({ code: 'not_found', error: 'x' })],
    ['not json', 'garbage'],
    ['no session', undefined],
  ];
  for (const [why, entries] of cases) {
    const k = kit(() => copied('a copy.txt'));
    withBrowse(k, entries);
    const r = await k.call('POST', URL('a.txt'), {});
    assert.equal(r.status, 200, `${why}: ${r.text}`);
    assert.equal(k.copies.length, 1, why);
    assert.equal(k.starts.length, 0, why);
  }
  // A session that fails is no error: the sync Job runs.
  const k = kit(() => copied('a copy.txt'));
  k.deps.browse = {
    run: async () => {
      throw new Error('down');
    },
  };
  assert.equal((await k.call('POST', URL('a.txt'), {})).status, 200);
});

test('every body field is optional, so the body may be left out, over HTTP and in an event', async () => {
  const k = kit(() => copied('notes copy.txt'));
  const r = await k.app.request(URL('notes.txt'), { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(r.status, 200, await r.clone().text());
  const ev = await k.app.request('/', {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'ce-specversion': '1.0', 'ce-id': 'c-1', 'ce-source': '/tests', 'ce-type': 'dev.felis.files.copy', 'content-type': 'application/json' },
    body: JSON.stringify({ server: 'survival', path: 'notes.txt' }),
  });
  assert.equal(ev.status, 200, await ev.clone().text());
  assert.deepEqual(
    k.copies.map((c) => c.path),
    ['notes.txt', 'notes.txt'],
  );
});

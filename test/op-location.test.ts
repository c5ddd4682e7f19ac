/**
 * Every 202 that names an op carries `Location`, the op's own URL (lib/http/op-accepted.ts): one
 * case per route whose schemas answer 202, found from the route table, so a new 202 route without
 * a case here fails. Each case drives the real handler with fakes to its 202.
 * @module
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { filesCompress } from '../functions/files-compress/app.ts';
import { filesCopy } from '../functions/files-copy/app.ts';
import { filesPull } from '../functions/files-pull/app.ts';
import { filesRegion } from '../functions/files-region/app.ts';
import { filesUnzip } from '../functions/files-unzip/app.ts';
import { filesUploads } from '../functions/files-uploads/app.ts';
import { filesZip } from '../functions/files-zip/app.ts';
import type { FilesEditor } from '../lib/files/editor.ts';
import { FileEditError } from '../lib/files/errors.ts';
import { SCHEMAS } from '../lib/http/routes/schemas.ts';
import type { RouteModule } from '../lib/http/serve.ts';
import type { ServerApi } from '../lib/kube/servers.ts';
import type { StartRequest } from '../lib/ops/background.ts';
import { startedView } from '../lib/ops/view.ts';
import { FakeGates, routeKit } from '../lib/testing/route-kit.ts';
import type { SessionChannel } from '../lib/uploads/sessions.ts';

/** 202 routes that start no op: a server's start and stop answer the server, which has no op URL. */
const NOT_OPS = new Set(['server.start', 'server.stop']);

const OP = '00000000000000cc';
const SESSION = 'ab'.repeat(16);
const servers = { getServer: async (_ns: string, name: string) => (name === 'survival' ? {} : undefined) } as unknown as ServerApi;

/** An editor whose every start answers op OP, whose sync copy refuses as too large, and whose pull cancels reach the Pod. */
function editor(earlier?: string) {
  return {
    async earlierOp(_s: string, req: StartRequest) {
      return earlier ? startedView(earlier, req.op, req.path, new Date(0)) : undefined;
    },
    async start(_t: unknown, req: StartRequest) {
      return startedView(OP, req.op, req.path, new Date(0));
    },
    async copy() {
      throw new FileEditError('too_large', 'a folder');
    },
    async cancelPull() {},
    async serverNotStopped() {},
  } as unknown as FilesEditor;
}

/** One session, complete, whose commit places it (the receiver that commits is not the session's first). */
const sessions: SessionChannel = {
  newId: () => SESSION,
  active: async () => 0,
  ended: async () => [
    {
      metadata: {
        creationTimestamp: new Date(0),
        labels: { 'felis.lolicon.best/files-op': 's000000000000002', 'felis.lolicon.best/files-mode': 'read', 'felis.lolicon.best/upload-session': SESSION },
        annotations: { 'felis.lolicon.best/files-path': 'a.bin' },
      },
    } as unknown as V1Job,
  ],
  start: async () => {},
  async call(_server, _id, req) {
    if (req.path.startsWith('/session')) return { status: 200, text: JSON.stringify({ id: SESSION, path: 'a.bin', size: 1, received: 1 }) };
    return { status: 200, text: JSON.stringify({ sha256: 'ab'.repeat(32), files: 1, bytes: 1 }), opId: 's000000000000002' };
  },
};

interface Case {
  app: RouteModule;
  method: string;
  path: string;
  body?: unknown;
  /** The op id the Location must name. */
  id: string;
  /** Serving a redelivered event: the op its first delivery started. */
  earlier?: string;
}

const S = '/api/v1/servers/survival';
const CASES: Record<string, Case[]> = {
  'files.compress': [
    { app: filesCompress, method: 'POST', path: `${S}/files/compress`, body: { paths: ['world'], format: 'zip' }, id: OP },
    { app: filesCompress, method: 'POST', path: `${S}/files/compress`, body: { paths: ['world'], format: 'zip' }, id: '00000000000000dd', earlier: '00000000000000dd' },
  ],
  'files.copy': [
    { app: filesCopy, method: 'POST', path: `${S}/files/copy?path=plugins`, body: { to: 'backup' }, id: OP },
    { app: filesCopy, method: 'POST', path: `${S}/files/copy?path=plugins`, body: {}, id: '00000000000000dd', earlier: '00000000000000dd' },
  ],
  'files.pull': [
    { app: filesPull, method: 'POST', path: `${S}/files/pull`, body: { url: 'https://example.com/a.jar', path: 'plugins' }, id: OP },
    { app: filesPull, method: 'POST', path: `${S}/files/pull`, body: { url: 'https://example.com/a.jar', path: 'plugins' }, id: '00000000000000dd', earlier: '00000000000000dd' },
  ],
  'files.pull.cancel': [{ app: filesPull, method: 'DELETE', path: `${S}/files/pull/${OP}`, id: OP }],
  'files.region.prune': [
    { app: filesRegion, method: 'POST', path: `${S}/files/region/prune`, body: { path: 'world', inhabited_below_ticks: 72000 }, id: OP },
    { app: filesRegion, method: 'POST', path: `${S}/files/region/prune`, body: { path: 'world', inhabited_below_ticks: 72000 }, id: '00000000000000dd', earlier: '00000000000000dd' },
  ],
  'files.unzip': [
    { app: filesUnzip, method: 'POST', path: `${S}/files/unzip?path=pack.zip`, body: {}, id: OP },
    { app: filesUnzip, method: 'POST', path: `${S}/files/unzip?path=pack.zip`, body: {}, id: '00000000000000dd', earlier: '00000000000000dd' },
  ],
  'files.zip': [
    { app: filesZip, method: 'POST', path: `${S}/files/zip?path=world`, body: {}, id: OP },
    { app: filesZip, method: 'POST', path: `${S}/files/zip?path=world`, body: {}, id: '00000000000000dd', earlier: '00000000000000dd' },
  ],
  // The upload's op is its session: its id, not its committing receiver's.
  'uploads.commit': [{ app: filesUploads, method: 'POST', path: `${S}/files/uploads/${SESSION}/commit`, body: {}, id: SESSION }],
};

test('every route that answers 202 with an op has a case here, and declares Location on its 202', () => {
  const accepting = Object.entries(SCHEMAS)
    .filter(([, s]) => 202 in s.responses)
    .map(([id]) => id)
    .filter((id) => !NOT_OPS.has(id))
    .sort();
  assert.deepEqual(Object.keys(CASES).sort(), accepting);
  for (const id of accepting) {
    const r = (SCHEMAS as Record<string, { responses: Record<number, { headers?: Record<string, unknown> }> }>)[id]!.responses[202]!;
    assert.ok(r.headers?.Location, `${id}: its 202 declares Location`);
  }
});

for (const [route, cases] of Object.entries(CASES)) {
  test(`${route}: its 202 carries Location, the op's own URL`, async () => {
    for (const c of cases) {
      const k = routeKit(c.app, { gates: new FakeGates(), editor: editor(c.earlier), servers });
      k.deps.uploadSessions = sessions;
      const r = await k.call(c.method, c.path, c.body);
      assert.equal(r.status, 202, `${c.method} ${c.path}: ${r.text}`);
      assert.equal(r.headers.get('location'), `/api/v1/servers/survival/files/ops/${c.id}`, `${c.method} ${c.path}${c.earlier ? ' (redelivered)' : ''}`);
      const named = typeof r.body.op === 'string' ? r.body.op : r.body.op.id;
      assert.equal(named, c.id, 'the Location names the op the body shows');
    }
  });
}

/**
 * Every function from the image, in a real container, as its Knative Service runs it: the Service's
 * container from `kubectl kustomize knative/` (command, env and envFrom, securityContext — uid 1000,
 * read-only root, every capability dropped, no privilege escalation — memory limit, volume mounts),
 * turned into `podman run` by test/container/podman.ts. Each answers /healthz and one real request
 * against the embedded API of a test stack on loopback, loads its modules from the compile cache the
 * image build made, stops cleanly on SIGTERM and leaves the image's root as it found it.
 *
 * Two deviations from a Knative Pod, both for a shared test machine: the function listens on
 * 127.0.0.1 and a free port (PORT=0, HOST) rather than 8080 on every address, and it reaches the API
 * through a kubeconfig (KUBECONFIG, mounted read-only) rather than the in-cluster service account.
 */

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { GRACE_MS, lockValue } from '../../lib/maintenance/holder.ts';
import { assemble, type Obj } from '../support/kustomize.ts';
import { waitOp } from '../support/ops.ts';
import { setServer } from '../support/servers.ts';
import { q, ROOT, type Stack, startStack } from '../support/stack.ts';
import { containerProgram, type FunctionContainer, IMAGE, podman, runs, startFunctionContainer } from './podman.ts';

const RUN = process.env.FELIS_CONTAINER_RUN ?? '/tmp';
const TOKEN = 'container-tier-token-0123456789';
const sha = (b: string) => createHash('sha256').update(b).digest('hex');
const LOCK = 'felis.lolicon.best/maintenance';

/** What one request expects: its statuses, and (optionally) more about the answer or the world. */
type Check = (body: any, s: Stack) => void | Promise<void>;
interface Call {
  method: string;
  path: string | ((previous: any) => string);
  body?: unknown;
  headers?: Record<string, string>;
  status: number[];
  check?: Check;
  /** Before the call (e.g. a lapsed lock to clear). */
  setup?: (s: Stack) => Promise<void>;
}

const uploadHeaders = (text: string) => ({
  'content-type': 'application/octet-stream',
  'content-digest': `sha-256=:${createHash('sha256').update(text).digest('base64')}:`,
});
/** A background op's answer: the op it started, then waited for through the stack. */
const opEnds =
  (state: string): Check =>
  async (body, s) => {
    const op = await waitOp(s, body.op.id, undefined, 120_000);
    assert.equal(op.state, state, JSON.stringify(op));
  };

/**
 * One real request per function (two or more where one needs the answer of another), in an order
 * that leaves the world free for the next: background ops are waited for, start comes last.
 */
const CALLS: Record<string, Call[]> = {
  holder: [
    { method: 'GET', path: '/api/v1/servers/survival/holder', status: [200], check: (b) => assert.deepEqual(b, { held: false }) },
    // The API reference from the image alone: the document and the page's files beside the bundles.
    { method: 'GET', path: '/openapi.json', status: [200], check: (b) => assert.deepEqual(b, JSON.parse(readFileSync(join(ROOT, 'docs/openapi.json'), 'utf8'))) },
    { method: 'GET', path: '/docs/assets/swagger-ui-bundle.js', status: [200], check: (b) => assert.ok(String(b).length > 100_000) },
  ],
  'files-list': [
    {
      method: 'GET',
      path: '/api/v1/servers/survival/files',
      status: [200],
      check: (b) =>
        assert.ok(
          b.entries.some((e: { name: string }) => e.name === 'eula.txt'),
          JSON.stringify(b),
        ),
    },
  ],
  'files-read': [{ method: 'GET', path: `/api/v1/servers/survival/file?path=${q('eula.txt')}`, status: [200], check: (b) => assert.match(Buffer.from(b.content, 'base64').toString(), /eula/) }],
  'files-search': [{ method: 'GET', path: `/api/v1/servers/survival/files/search?q=${q('*.txt')}`, status: [200], check: (b) => assert.ok(JSON.stringify(b).includes('eula.txt'), JSON.stringify(b)) }],
  'files-write': [
    {
      method: 'PUT',
      path: `/api/v1/servers/survival/file?path=${q('notes.txt')}`,
      body: { content: Buffer.from('from a container\n').toString('base64'), content_sha256: sha('from a container\n') },
      status: [200],
      check: (_b, s) => assert.equal(readFileSync(join(s.world, 'notes.txt'), 'utf8'), 'from a container\n'),
    },
  ],
  'files-mkdir': [{ method: 'POST', path: `/api/v1/servers/survival/files/mkdir?path=${q('made')}`, status: [200, 201], check: (_b, s) => assert.ok(existsSync(join(s.world, 'made'))) }],
  'files-rename': [
    {
      method: 'POST',
      path: `/api/v1/servers/survival/files/rename?path=${q('notes.txt')}`,
      body: { to: 'notes.old' },
      status: [200],
      check: (_b, s) => assert.ok(existsSync(join(s.world, 'notes.old'))),
    },
  ],
  'files-copy': [
    {
      method: 'POST',
      path: `/api/v1/servers/survival/files/copy?path=${q('notes.old')}`,
      body: { to: 'notes.copy' },
      status: [200],
      check: (_b, s) => assert.ok(existsSync(join(s.world, 'notes.copy'))),
    },
  ],
  'files-batch': [
    { method: 'POST', path: '/api/v1/servers/survival/files/delete', body: { paths: ['notes.copy'] }, status: [200], check: (_b, s) => assert.ok(!existsSync(join(s.world, 'notes.copy'))) },
  ],
  'files-delete': [{ method: 'DELETE', path: `/api/v1/servers/survival/file?path=${q('notes.old')}`, status: [200], check: (_b, s) => assert.ok(!existsSync(join(s.world, 'notes.old'))) }],
  'files-trash': [
    { method: 'GET', path: '/api/v1/servers/survival/files/trash', status: [200], check: (b) => assert.ok(b.items.length >= 1, `what the deletes before moved aside: ${JSON.stringify(b)}`) },
  ],
  'files-zip': [{ method: 'POST', path: `/api/v1/servers/survival/files/zip?path=${q('plugins')}`, body: { name: 'p.zip' }, status: [202], check: opEnds('succeeded') }],
  'files-unzip': [{ method: 'POST', path: `/api/v1/servers/survival/files/unzip?path=${q('p.zip')}`, body: { to: 'made', overwrite: false }, status: [202], check: opEnds('succeeded') }],
  'files-compress': [
    { method: 'POST', path: '/api/v1/servers/survival/files/compress', body: { paths: ['made/plugins'], format: 'tar.zst', name: 'p.tar.zst' }, status: [202], check: opEnds('succeeded') },
  ],
  // A documentation address (TEST-NET-1): the pull Job's guard refuses it before any packet leaves.
  'files-pull': [{ method: 'POST', path: '/api/v1/servers/survival/files/pull', body: { url: 'http://192.0.2.1/plugin.jar', path: 'plugins' }, status: [202], check: opEnds('failed') }],
  'files-ops': [{ method: 'GET', path: '/api/v1/servers/survival/files/ops', status: [200], check: (b) => assert.ok(b.ops.length >= 3, JSON.stringify(b)) }],
  'files-upload': [
    {
      method: 'PUT',
      path: `/api/v1/servers/survival/files/upload?path=${q('plugins/up.txt')}&overwrite=true`,
      body: 'uploaded from a container\n',
      headers: uploadHeaders('uploaded from a container\n'),
      status: [200, 201],
      check: (_b, s) => assert.equal(readFileSync(join(s.world, 'plugins', 'up.txt'), 'utf8'), 'uploaded from a container\n'),
    },
  ],
  'files-uploads': [
    { method: 'POST', path: `/api/v1/servers/survival/files/uploads?path=${q('plugins/session.txt')}`, body: { size: 9 }, status: [200, 201] },
    { method: 'PUT', path: (v) => `/api/v1/servers/survival/files/uploads/${v.id}?offset=0`, body: 'uploaded\n', headers: uploadHeaders('uploaded\n'), status: [200] },
    {
      method: 'POST',
      path: (v) => `/api/v1/servers/survival/files/uploads/${v.id}/commit`,
      body: { overwrite: true },
      // 202 with the op, already succeeded here: a commit of a large file may still be landing.
      status: [200, 201, 202],
      check: (_b, s) => assert.equal(readFileSync(join(s.world, 'plugins', 'session.txt'), 'utf8'), 'uploaded\n'),
    },
  ],
  'files-download': [
    { method: 'POST', path: `/api/v1/servers/survival/files/download?path=${q('eula.txt')}`, status: [200] },
    { method: 'GET', path: (v) => new URL(v.url, 'http://origin.invalid').pathname + new URL(v.url, 'http://origin.invalid').search, status: [200], check: (b) => assert.match(String(b), /eula/) },
  ],
  'world-lock': [
    {
      setup: (s) => setServer(s.cluster, 'survival', { annotations: { [LOCK]: lockValue('backup', new Date(Date.now() - GRACE_MS - 1000)) } }),
      method: 'DELETE',
      path: '/api/v1/servers/survival/lock',
      status: [200],
    },
  ],
  settle: [{ method: 'POST', path: '/api/v1/restore-chains/settle', status: [200] }],
  start: [{ method: 'POST', path: '/api/v1/servers/survival/start', status: [200, 202] }],
};

/** Every bundle the image serves, by name (`/app/functions/<name>.mjs`). */
function imageFunctions(): string[] {
  return podman(['run', '--rm', '--network', 'none', '--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024', '--entrypoint', '["ls","/app/functions"]', IMAGE])
    .split('\n')
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => f.slice(0, -4));
}

/** The rendered manifests' function Services, by function name, with the config map they read. */
function services(): { byName: Map<string, Obj>; config: Record<string, string> } {
  const objs = assemble(join(ROOT, 'knative'));
  const byName = new Map<string, Obj>();
  for (const o of objs) if (o.kind === 'Service' && o.apiVersion.startsWith('serving.knative.dev/')) byName.set(o.metadata.name.replace(/^felis-world-/, ''), o);
  const cm = objs.find((o) => o.kind === 'ConfigMap' && /^felis-world-[a-z0-9]+$/.test(o.metadata.name) && o.data?.FELIS_FILES_COMMAND);
  assert.ok(cm, "the functions' config map");
  return { byName, config: cm.data as Record<string, string> };
}

describe('every function from the image, in a container as its Service runs it', () => {
  let s: Stack;
  let secrets: string;
  let kubeconfigDir: string;
  let manifests: ReturnType<typeof services>;
  before(async () => {
    s = await startStack({ editor: { timeoutMs: 120_000 } });
    // The Jobs the functions create run from the image too.
    s.program = containerProgram();
    manifests = services();
    // The Secrets the Services mount, as the kubelet lays them out: one file per key.
    secrets = join(RUN, `fn-secrets-${randomBytes(4).toString('hex')}`);
    mkdirSync(join(secrets, 'token'), { recursive: true });
    mkdirSync(join(secrets, 'job-key'));
    writeFileSync(join(secrets, 'token', 'token'), TOKEN, { mode: 0o644 });
    writeFileSync(join(secrets, 'job-key', 'key'), randomBytes(32), { mode: 0o644 });
    kubeconfigDir = join(RUN, `fn-kubeconfig-${randomBytes(4).toString('hex')}`);
    mkdirSync(kubeconfigDir);
    writeFileSync(join(kubeconfigDir, 'kubeconfig'), s.cluster.kubeconfigYaml(s.cluster.tokenFor('minecraft', 'felis-world')), { mode: 0o644 });
  });
  after(async () => {
    await s?.close();
    await Promise.all(runs.map((r) => r.done));
  });

  test('the manifests give every bundle of the image a Service, and every Service a request here', () => {
    const bundles = imageFunctions().sort();
    assert.deepEqual(bundles, [...manifests.byName.keys()].sort());
    assert.deepEqual(Object.keys(CALLS).sort(), bundles);
  });

  for (const fn of Object.keys(CALLS)) {
    test(`${fn}: /healthz and a real request as uid 1000 on a read-only root, modules from the compile cache`, { timeout: 240_000 }, async () => {
      const svc = manifests.byName.get(fn);
      assert.ok(svc, `a Service for ${fn}`);
      const podSpec = svc.spec.template.spec as V1Pod['spec'];
      const c = podSpec!.containers[0] as V1Container;
      const sc = c.securityContext!;
      assert.equal(sc.runAsUser, 1000);
      assert.equal(sc.readOnlyRootFilesystem, true);
      assert.deepEqual(sc.capabilities?.drop, ['ALL']);

      // The container's environment as the kubelet makes it: the config map, then its own env.
      const env: Record<string, string> = { ...manifests.config };
      for (const e of c.env ?? []) env[e.name] = e.value ?? '';
      Object.assign(env, { PORT: '0', HOST: '127.0.0.1', KUBECONFIG: '/var/run/felis-test/kubeconfig', NODE_DEBUG_NATIVE: 'COMPILE_CACHE' });
      // Each Secret volume from its folder here; nothing else is writable (no emptyDir in a function's Pod).
      const folders: Record<string, string> = { token: join(secrets, 'token'), 'job-key': join(secrets, 'job-key') };
      const mounts = (c.volumeMounts ?? []).map((m) => {
        const dir = folders[m.name];
        assert.ok(dir, `${fn}: a folder for volume ${m.name}`);
        assert.equal(m.readOnly, true, `${fn}: ${m.name} is mounted read-only`);
        return { path: m.mountPath, dir, readOnly: true };
      });
      mounts.push({ path: '/var/run/felis-test', dir: kubeconfigDir, readOnly: true });

      const f: FunctionContainer = await startFunctionContainer(podSpec, c, { env, mounts });
      let stopped: Awaited<ReturnType<FunctionContainer['stop']>> | undefined;
      try {
        const h = await fetch(`${f.url}/healthz`);
        assert.equal(h.status, 200, f.output());
        assert.deepEqual(await h.json(), { status: 'ok' });
        await f.loaded();
        // The serving process as the kernel sees it: its user, its capabilities, no new privileges; and its root read-only.
        const [pid, readOnly] = podman(['inspect', '--format', '{{.State.Pid}} {{.HostConfig.ReadonlyRootfs}}', f.name]).trim().split(' ');
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        assert.match(status, /^Uid:\s+1000\s+1000\s+1000\s+1000$/m, `${fn}: uid 1000`);
        assert.match(status, /^Gid:\s+1000\s/m, `${fn}: gid 1000 (the image's node group)`);
        for (const set of ['CapPrm', 'CapEff', 'CapBnd']) assert.match(status, new RegExp(`^${set}:\\s+0+$`, 'm'), `${fn}: no capability (${set})`);
        assert.match(status, /^NoNewPrivs:\s+1$/m, `${fn}: no privilege escalation`);
        assert.equal(readOnly, 'true');

        let previous: any;
        for (const call of CALLS[fn]!) {
          await call.setup?.(s);
          const path = typeof call.path === 'function' ? call.path(previous) : call.path;
          const raw = typeof call.body === 'string';
          const res = await fetch(`${f.url}${path}`, {
            method: call.method,
            headers: { authorization: `Bearer ${TOKEN}`, ...(call.body !== undefined && !raw ? { 'content-type': 'application/json' } : {}), ...call.headers },
            ...(call.body !== undefined ? { body: raw ? (call.body as string) : JSON.stringify(call.body) } : {}),
          });
          const text = await res.text();
          assert.ok(call.status.includes(res.status), `${fn}: ${call.method} ${path} → ${res.status} ${text}\n${f.output().slice(-4000)}`);
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // A file's bytes (a download), not JSON.
          }
          await call.check?.(body, s);
          previous = body;
        }
      } finally {
        stopped = await f.stop();
      }
      assert.equal(stopped.exitCode, 0, `${fn} stops cleanly on SIGTERM:\n${f.output().slice(-4000)}`);
      assert.deepEqual(stopped.diff, [], `${fn} wrote nothing into the image's root`);
      // Every module this start compiled came from the cache made at build time, and none was rejected.
      const out = f.output();
      const compiled = new Set([...out.matchAll(/reading cache from \S+ for ESM (file:\/\/\S+?)\.\.\./g)].map((m) => m[1]!));
      const accepted = new Set([...out.matchAll(/V8 code cache for ESM (file:\/\/\S+) was accepted/g)].map((m) => m[1]!));
      assert.ok(compiled.has(`file:///app/functions/${fn}.mjs`), `${fn}: its bundle was read through the cache:\n${out.slice(0, 4000)}`);
      assert.ok(
        [...compiled].some((u) => u.includes('/chunks/client-parts-')),
        `${fn}: the Kubernetes client was loaded through the cache`,
      );
      assert.deepEqual(
        [...compiled].filter((u) => !accepted.has(u)),
        [],
        `${fn}: modules compiled without the build-time cache`,
      );
      assert.doesNotMatch(out, /cache miss|Cannot create cache directory/i, fn);
    });
  }
});

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
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { CONTAINER_CALLS as CALLS, CONTAINER_ORDER } from '../support/function-e2e.generated.test-kit.ts';
import { runOrder } from '../support/function-e2e.ts';
import { assemble, type Obj } from '../support/kustomize.ts';
import { ROOT, type Stack, startStack } from '../support/stack.ts';
import { containerProgram, type FunctionContainer, IMAGE, podman, runs, startFunctionContainer } from './podman.ts';

const RUN = process.env.FELIS_CONTAINER_RUN ?? '/tmp';
const TOKEN = 'container-tier-token-0123456789';

/**
 * One real request per function (two or more where one needs the answer of another), from its
 * folder's e2e.test-kit.ts, in an order that leaves the world free for the next: background ops
 * are waited for, each function runs after those whose leftovers it uses, start comes last.
 */
const ORDER = runOrder(Object.keys(CALLS), CONTAINER_ORDER);

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

  for (const fn of ORDER) {
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

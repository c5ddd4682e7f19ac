/**
 * knative/ as `kubectl apply -k knative/` would send it: every object validates against the real
 * Kubernetes and Knative OpenAPI schemas (the kubernetes-models packages), and the deployment
 * holds together: a Service per function that scales to zero, is reachable only in the cluster,
 * runs as its own ServiceAccount, reads its token from a mounted Secret, and is given the same
 * image and namespace for its Jobs as kustomization.yaml sets for everything.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadAll } from 'js-yaml';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FUNCTIONS } from '../functions/index.ts';
import { configFromEnv } from '../lib/config.ts';
import { ROUTE_PERMISSIONS } from '../lib/auth/actions.ts';
import { BROWSE_PORT, renderBrowseJob, renderFilesJob } from '../lib/job-spec/render.ts';
import { exportCommand, renderExportJob } from '../lib/job-spec/export-job.ts';
import { RECEIVE_PORT, renderReceiverJob } from '../lib/job-spec/upload-job.ts';
import { assemble, byKind, getPath, type Obj } from './support/kustomize.ts';
import { roleGrants } from './support/role.ts';
import { ROOT } from './support/stack.ts';

const DIR = join(ROOT, 'knative');
/** File functions that answer only after their Job ends; the others answer at once (202, listing). */
const BACKGROUND_FUNCTIONS = new Set(['files-unzip', 'files-zip', 'files-ops']);
const FILE_FUNCTIONS = Object.keys(FUNCTIONS).filter((f) => f.startsWith('files-') && !BACKGROUND_FUNCTIONS.has(f));
/** Functions that hold the shared job key: browse sessions (list, read), uploads, streamed writes and signed downloads. */
const JOB_KEY_FUNCTIONS = new Set(['files-list', 'files-read', 'files-upload', 'files-uploads', 'files-write', 'files-download']);

/** The schema model of an object's apiVersion and kind: core and API groups, and Knative's. */
async function modelOf(o: Obj): Promise<{ new (data: unknown): { validate(): void } }> {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  const spec = group.endsWith('knative.dev')
    ? `@kubernetes-models/knative/${group}/${version}/${o.kind}`
    : `kubernetes-models/${group ? `${group}/${version}` : version}/${o.kind}`;
  const mod = (await import(spec)) as Record<string, { new (data: unknown): { validate(): void } }>;
  const model = mod[o.kind];
  assert.ok(model, `a schema model for ${o.apiVersion} ${o.kind}`);
  return model;
}

/** Does a LabelSelector (matchLabels, matchExpressions with In/NotIn/Exists/DoesNotExist) select these labels? */
function selects(sel: Obj | undefined, labels: Record<string, string>): boolean {
  if (!sel) return false;
  for (const [k, v] of Object.entries((sel.matchLabels ?? {}) as Record<string, string>)) if (labels[k] !== v) return false;
  for (const e of (sel.matchExpressions ?? []) as { key: string; operator: string; values?: string[] }[]) {
    const has = Object.hasOwn(labels, e.key);
    if (e.operator === 'In' && !(has && e.values!.includes(labels[e.key]!))) return false;
    if (e.operator === 'NotIn' && has && e.values!.includes(labels[e.key]!)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(e.operator)) throw new Error(`unknown operator ${e.operator}`);
  }
  return true;
}

async function validate(o: Obj): Promise<void> {
  const Model = await modelOf(o);
  new Model(o).validate();
}

const knativeServices = (objs: Obj[]) => objs.filter((o) => o.apiVersion === 'serving.knative.dev/v1' && o.kind === 'Service');

describe('knative/ manifests', () => {
  const objs = assemble(DIR);
  const services = new Map(knativeServices(objs).map((s) => [s.metadata.name, s]));
  const config = byKind(objs, 'ConfigMap').get('felis-world')!;

  test('every assembled object validates against its Kubernetes or Knative schema', async () => {
    assert.ok(objs.length > 0);
    for (const o of objs) {
      await assert.doesNotReject(validate(o), `${o.apiVersion} ${o.kind} ${o.metadata.name}`);
    }
  });

  test('the schemas reject a broken Service and a broken Role (the validation can fail)', async () => {
    const svc = structuredClone(services.get('files-read')!);
    svc.spec.template.spec.containerConcurrency = 'ten';
    await assert.rejects(validate(svc), /containerConcurrency must be integer/);
    const role = structuredClone(objs.find((o) => o.kind === 'Role')!);
    role.rules[0].verbs = 'get';
    await assert.rejects(validate(role), /verbs must be array/);
  });

  test('the namespace is set once: every namespaced object and binding subject is in it, and the functions are told it', () => {
    const clusterScoped = new Set(['CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding']);
    for (const o of objs) {
      if (clusterScoped.has(o.kind)) assert.equal(o.metadata.namespace, undefined);
      else assert.equal(o.metadata.namespace, 'minecraft', `${o.kind} ${o.metadata.name}`);
      if (o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding') for (const s of o.subjects) assert.equal(s.namespace, 'minecraft');
    }
    assert.equal(config.data.FELIS_NAMESPACE, 'minecraft');
  });

  test('the image is set once: every function and the file Jobs run the image kustomization.yaml names', () => {
    const images = new Set([...services.values()].map((s) => s.spec.template.spec.containers[0].image));
    assert.equal(images.size, 1);
    const [image] = images;
    assert.match(image!, /^[^:]+\/felis-world:[\w.-]+$/);
    assert.equal(config.data.FELIS_IMAGE, image);
    // The functions accept the ConfigMap as their environment, and it configures the file editor.
    const cfg = configFromEnv(config.data);
    assert.equal(cfg.editor?.image, image);
    assert.equal(cfg.namespace, 'minecraft');
    assert.deepEqual(cfg.editor?.command, ['/usr/local/bin/felis', 'files']);
  });

  test('a Knative Service per function: scale to zero, cluster-local, /healthz probes, its own bundle', () => {
    assert.deepEqual([...services.keys()].sort(), Object.keys(FUNCTIONS).sort());
    for (const [fn, s] of services) {
      assert.equal(s.metadata.labels?.['networking.knative.dev/visibility'], 'cluster-local', fn);
      const a = s.spec.template.metadata.annotations;
      assert.equal(a['autoscaling.knative.dev/min-scale'], '0', fn);
      assert.match(a['autoscaling.knative.dev/max-scale'], /^[1-9]\d*$/, fn);
      assert.match(a['autoscaling.knative.dev/scale-to-zero-pod-retention-period'], /^\d+[smh]$/, fn);
      const spec = s.spec.template.spec;
      assert.ok(Number.isInteger(spec.containerConcurrency) && spec.containerConcurrency > 0, fn);
      assert.ok(spec.timeoutSeconds > 0, fn);
      // A stopping instance drains within the grace Knative gives it (the revision's timeoutSeconds).
      const shutdown = spec.containers[0].env.find((e: { name: string }) => e.name === 'FELIS_SHUTDOWN_SECONDS')?.value;
      assert.ok(Number(shutdown) > 0 && Number(shutdown) <= spec.timeoutSeconds, `${fn}: FELIS_SHUTDOWN_SECONDS ${shutdown}`);
      assert.equal(spec.containers.length, 1, fn);
      const c = spec.containers[0];
      assert.deepEqual(c.command, ['node', `/app/functions/${fn}.mjs`]);
      assert.equal(c.readinessProbe.httpGet.path, '/healthz', fn);
      assert.equal(c.livenessProbe.httpGet.path, '/healthz', fn);
      assert.equal(c.securityContext.readOnlyRootFilesystem, true, fn);
      assert.equal(c.securityContext.runAsNonRoot, true, fn);
    }
  });

  test('a file op is never cut by Knative before the function gives up waiting for its Job', () => {
    const waitS = configFromEnv(config.data).editor!.timeoutMs / 1000;
    assert.ok(waitS > 0);
    for (const fn of FILE_FUNCTIONS) assert.ok(services.get(fn)!.spec.template.spec.timeoutSeconds > waitS, fn);
  });

  test('the background functions never wait for a Job: a short timeout, and each is a file function', () => {
    for (const fn of BACKGROUND_FUNCTIONS) {
      assert.ok(services.has(fn), fn);
      const t = services.get(fn)!.spec.template.spec.timeoutSeconds;
      assert.ok(t > 0 && t <= 60, `${fn}: timeoutSeconds ${t}`);
    }
  });

  test('the bearer token comes from a Secret mounted read-only as the file FELIS_TOKEN_FILE names', () => {
    for (const [fn, s] of services) {
      const spec = s.spec.template.spec;
      const c = spec.containers[0];
      const file = c.env.find((e: { name: string }) => e.name === 'FELIS_TOKEN_FILE')?.value as string;
      assert.ok(file, fn);
      assert.equal(c.env.some((e: { name: string }) => e.name === 'FELIS_TOKEN'), false, `${fn}: no token in plain env`);
      const mount = c.volumeMounts.find((m: { mountPath: string }) => file.startsWith(m.mountPath + '/'));
      assert.ok(mount?.readOnly, `${fn}: ${file} is on a read-only mount`);
      const vol = spec.volumes.find((v: { name: string }) => v.name === mount.name);
      assert.ok(vol?.secret?.secretName, `${fn}: the mount is a Secret`);
      const item = vol.secret.items.find((i: { path: string }) => `${mount.mountPath}/${i.path}` === file);
      assert.ok(item, `${fn}: the Secret key lands at ${file}`);
      assert.equal(c.envFrom[0].configMapRef.name, 'felis-world', fn);
    }
  });

  test('each function runs as its own ServiceAccount, bound to its own Role', () => {
    const sas = byKind(objs, 'ServiceAccount');
    for (const [fn, s] of services) {
      const sa = s.spec.template.spec.serviceAccountName;
      assert.ok(sas.has(sa), `${fn}: ServiceAccount ${sa} exists`);
      const bindings = objs.filter((o) => o.kind === 'RoleBinding' && o.subjects.some((x: { name: string }) => x.name === sa));
      assert.equal(bindings.length, 1, `${fn}: one RoleBinding`);
      assert.equal(bindings[0]!.roleRef.kind, 'Role');
      assert.ok(byKind(objs, 'Role').has(bindings[0]!.roleRef.name), fn);
    }
  });

  test('each function may review tokens and access, and nothing more cluster-wide: one system:auth-delegator binding per function', () => {
    const crbs = [...byKind(objs, 'ClusterRoleBinding').values()];
    assert.equal(byKind(objs, 'ClusterRole').size, 0, 'no ClusterRole of our own');
    for (const b of crbs) {
      assert.deepEqual(b.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' }, b.metadata.name);
      assert.equal(b.subjects.length, 1, b.metadata.name);
    }
    const bound = crbs.map((b) => b.subjects[0].name).sort();
    assert.deepEqual(bound, [...services.values()].map((s) => s.spec.template.spec.serviceAccountName).sort());
  });

  test("the file Jobs' Pods run as a ServiceAccount that gets no API token", () => {
    const name = config.data.FELIS_JOB_SERVICE_ACCOUNT;
    const sa = byKind(objs, 'ServiceAccount').get(name);
    assert.ok(sa, `ServiceAccount ${name}`);
    assert.equal(sa.automountServiceAccountToken, false);
    assert.equal(objs.some((o) => o.kind === 'RoleBinding' && o.subjects.some((x: { name: string }) => x.name === name)), false, 'no Role for the Jobs');
  });

  test('knative/rbac.yaml (the Role of npm start and the e2e tests) is the union of the per-function Roles', () => {
    const union = new Set<string>();
    const functionRoles = new Set(Object.keys(FUNCTIONS).map((f) => `felis-world-${f}`));
    for (const r of byKind(objs, 'Role').values()) {
      if (!functionRoles.has(r.metadata.name)) continue;
      for (const rule of r.rules) for (const v of rule.verbs) for (const res of rule.resources) union.add(`${v} ${res}`);
    }
    assert.deepEqual([...roleGrants()].sort(), [...union].sort());
  });

  test('the test assembly refuses a kustomization feature it does not implement, rather than skip it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'felis-kust-'));
    try {
      writeFileSync(join(dir, 'kustomization.yaml'), 'resources: []\npatches:\n  - path: p.yaml\n');
      assert.throws(() => assemble(dir), /not supported by the test assembly: patches/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('settling needs no caller: backup Job changes and a minute tick reach the settle function', () => {
    const sources = objs.filter((o) => o.apiVersion === 'sources.knative.dev/v1');
    const api = sources.find((o) => o.kind === 'ApiServerSource')!;
    assert.equal(api.spec.mode, 'Resource');
    assert.deepEqual(api.spec.resources, [{ apiVersion: 'batch/v1', kind: 'Job', selector: { matchLabels: { 'app.kubernetes.io/managed-by': 'felis-backup' } } }]);
    // The watcher may only read Jobs, and it is not a function's identity.
    const watcher = byKind(objs, 'Role').get(api.spec.serviceAccountName)!;
    assert.deepEqual(watcher.rules, [{ apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch'] }]);
    const ping = sources.find((o) => o.kind === 'PingSource')!;
    assert.equal(ping.spec.schedule, '* * * * *');
    const broker = byKind(objs, 'Broker').values().next().value!;
    for (const s of [api, ping]) assert.deepEqual(s.spec.sink.ref, { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: broker.metadata.name });
    const triggers = [...byKind(objs, 'Trigger').values()];
    const types = triggers.map((t) => t.spec.filter.attributes.type).sort();
    assert.deepEqual(types, ['dev.knative.apiserver.resource.update', 'dev.knative.sources.ping']);
    for (const t of triggers) {
      assert.equal(t.spec.broker, broker.metadata.name);
      assert.equal(t.spec.subscriber.ref.name, 'settle');
      assert.ok(services.has(t.spec.subscriber.ref.name));
    }
  });

  test('the example Roles validate, grant only permissions the route table uses, and the viewer changes nothing', async () => {
    const used = new Set<string>();
    for (const p of Object.values(ROUTE_PERMISSIONS)) {
      if (p.kind === 'server') used.add(`${p.verb} minecraftservers/${p.subresource}`);
      if (p.kind === 'nonresource') used.add(`${p.verb} ${p.path}`);
    }
    const examples = ['roles.yaml', 'one-server.yaml', 'settle-events.yaml'].flatMap((f) => loadAll(readFileSync(join(DIR, 'examples', f), 'utf8')) as Obj[]);
    const roles = new Map(examples.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role').map((o) => [o.metadata.name, o]));
    for (const o of examples) await assert.doesNotReject(validate(o), `${o.kind} ${o.metadata.name}`);
    const grants = (name: string) => {
      const out = new Set<string>();
      for (const r of roles.get(name)!.rules) {
        for (const v of r.verbs) {
          for (const res of r.resources ?? []) {
            assert.deepEqual(r.apiGroups, ['felis.lolicon.best'], name);
            out.add(`${v} ${res}`);
          }
          for (const u of r.nonResourceURLs ?? []) out.add(`${v} ${u}`);
        }
      }
      return out;
    };
    for (const name of roles.keys()) for (const g of grants(name)) assert.ok(used.has(g), `${name}: ${g} is no route's permission`);
    assert.deepEqual([...grants('felis-world-viewer')].filter((g) => !g.startsWith('get ')), []);
    assert.ok(grants('felis-world-editor').has('update minecraftservers/files'));
    assert.ok(grants('felis-world-operator').has('delete minecraftservers/lock'));
    // The per-server example names its server; its binding refers to a Role that exists.
    const perServer = roles.get('felis-world-editor-survival')!;
    assert.ok(perServer.rules.every((r: { resourceNames?: string[] }) => r.resourceNames?.length === 1));
    for (const b of examples.filter((o) => o.kind.endsWith('Binding'))) assert.ok(roles.has(b.roleRef.name), `${b.metadata.name} → ${b.roleRef.name}`);
  });

  test('file Job Pods accept connections only from files-list, files-read, the upload functions and files-write, only on the serve port', () => {
    const np = byKind(objs, 'NetworkPolicy').get('felis-world-file-jobs')!;
    assert.deepEqual(np.spec.policyTypes, ['Ingress']);
    const settings = configFromEnv(config.data).editor!;
    const base = { ...settings, server: 'survival', opId: 'b0123456789abcde', worldPvc: 'world-survival-0' };
    const browse = renderBrowseJob({ ...base, tokenSha256: 'a'.repeat(64), idleSeconds: 60, lifetimeSeconds: 540 });
    const oneShot = renderFilesJob({ ...base, op: 'read', path: 'a' });
    const receiver = renderReceiverJob({ ...base, opId: 'u0123456789abcde', tokenSha256: 'a'.repeat(64), once: true, idleSeconds: 10, lifetimeSeconds: 540 });
    const write = renderFilesJob({ ...base, op: 'write', path: 'a', sha256: 'b'.repeat(64), contentTokenSha256: 'a'.repeat(64) });
    for (const job of [browse, oneShot, receiver, write]) assert.ok(selects(np.spec.podSelector, job.spec!.template.metadata!.labels!), job.metadata!.name);
    assert.equal(selects(np.spec.podSelector, { 'app.kubernetes.io/managed-by': 'felis-backup' }), false);
    assert.equal(np.spec.ingress.length, 1);
    const rule = np.spec.ingress[0];
    assert.deepEqual(rule.ports, [{ protocol: 'TCP', port: BROWSE_PORT }]);
    assert.deepEqual(browse.spec!.template.spec!.containers[0]!.ports!.map((p) => p.containerPort), [BROWSE_PORT]);
    assert.deepEqual(receiver.spec!.template.spec!.containers[0]!.ports!.map((p) => p.containerPort), [RECEIVE_PORT]);
    assert.deepEqual(write.spec!.template.spec!.containers[0]!.ports!.map((p) => p.containerPort), [BROWSE_PORT]);
    assert.ok(rule.from.every((f: Obj) => f.podSelector && !f.namespaceSelector && !f.ipBlock), 'pods of this namespace only');
    const admitted = [...services.entries()].filter(([, svc]) => rule.from.some((f: Obj) => selects(f.podSelector, svc.spec.template.metadata.labels)));
    assert.deepEqual(admitted.map(([fn]) => fn).sort(), ['files-list', 'files-read', 'files-upload', 'files-uploads', 'files-write']);
  });

  test('export Job Pods accept connections only from files-download, only on the serve port; no file Job Pod is selected', () => {
    const policies = byKind(objs, 'NetworkPolicy');
    assert.deepEqual([...policies.keys()].sort(), ['felis-world-export-jobs', 'felis-world-file-jobs']);
    const np = policies.get('felis-world-export-jobs')!;
    assert.deepEqual(np.spec.policyTypes, ['Ingress']);
    const settings = configFromEnv(config.data).editor!;
    const job = renderExportJob({ ...settings, command: exportCommand(settings.command), server: 'survival', exportId: '0123456789abcdef', worldPvc: 'world-survival-0', path: 'a', dir: false, tokenSha256: 'a'.repeat(64), idleSeconds: 60 });
    const labels = job.spec!.template.metadata!.labels!;
    assert.ok(selects(np.spec.podSelector, labels));
    assert.equal(selects(policies.get('felis-world-file-jobs')!.spec.podSelector, labels), false);
    assert.equal(selects(np.spec.podSelector, renderFilesJob({ ...settings, server: 'survival', opId: '0123456789abcdef', worldPvc: 'w', op: 'read', path: 'a' }).spec!.template.metadata!.labels!), false);
    assert.deepEqual(job.spec!.template.spec!.containers[0]!.command, ['/usr/local/bin/felis', 'export']);
    assert.deepEqual(np.spec.ingress.length, 1);
    const rule = np.spec.ingress[0];
    assert.deepEqual(rule.ports, [{ protocol: 'TCP', port: BROWSE_PORT }]);
    assert.deepEqual(job.spec!.template.spec!.containers[0]!.ports!.map((p) => p.containerPort), [BROWSE_PORT]);
    assert.ok(rule.from.every((f: Obj) => f.podSelector && !f.namespaceSelector && !f.ipBlock), 'pods of this namespace only');
    const admitted = [...services.entries()].filter(([, svc]) => rule.from.some((f: Obj) => selects(f.podSelector, svc.spec.template.metadata.labels)));
    assert.deepEqual(admitted.map(([fn]) => fn), ['files-download']);
  });

  test('files-list, files-read, the upload functions, files-write and files-download read the job key from an optional Secret; no other function has it', () => {
    for (const [fn, svc] of services) {
      const spec = svc.spec.template.spec;
      const c = spec.containers[0];
      const file = c.env.find((e: { name: string }) => e.name === 'FELIS_JOB_KEY_FILE')?.value as string | undefined;
      if (!JOB_KEY_FUNCTIONS.has(fn)) {
        assert.equal(file, undefined, fn);
        continue;
      }
      assert.ok(file, fn);
      const mount = c.volumeMounts.find((m: { mountPath: string }) => file.startsWith(m.mountPath + '/'));
      assert.ok(mount?.readOnly, `${fn}: ${file} is on a read-only mount`);
      const vol = spec.volumes.find((v: { name: string }) => v.name === mount.name);
      assert.equal(vol.secret.optional, true, `${fn}: without the Secret the function still starts (one-shot Jobs only)`);
      assert.ok(vol.secret.items.some((i: { path: string }) => `${mount.mountPath}/${i.path}` === file), fn);
      const both = configFromEnv({ ...config.data, FELIS_JOB_KEY_FILE: file });
      assert.equal(both.downloads!.keyFile, file);
      const browse = both.browse!;
      assert.equal(browse.keyFile, file);
      assert.ok(browse.idleSeconds < browse.lifetimeSeconds, 'a session idles out before its lifetime');
    }
  });

  test('the MinecraftServer CRD is in, for dev clusters', () => {
    const crd = byKind(objs, 'CustomResourceDefinition').get('minecraftservers.felis.lolicon.best');
    assert.equal(getPath(crd, 'spec.names.kind'), 'MinecraftServer');
  });
});

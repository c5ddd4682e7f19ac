/**
 * knative/ as `kubectl apply -k knative/` sends it, rendered by kustomize itself (kubectl
 * kustomize; test/support/kustomize.ts) for the default, for every component alone and all
 * together, and for a second namespace: every object validates against the real Kubernetes and
 * Knative OpenAPI schemas (the kubernetes-models packages), and the deployment holds together: a
 * Service per function that scales to zero, is reachable only in the cluster, runs as its own
 * ServiceAccount, reads its token from a mounted Secret, is given the same image and namespace
 * for its Jobs as kustomization.yaml and namespace.yaml set for everything, and whose bindings
 * and cluster-scoped names follow the namespace.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadAll } from 'js-yaml';
import { FUNCTIONS } from '../functions/index.ts';
import { authConfigFromEnv } from '../lib/auth/config.ts';
import { configFromEnv } from '../lib/config.ts';
import { SERVER_TIMEOUTS } from '../lib/http/host.ts';
import { ROUTE_PERMISSIONS } from '../lib/http/routes/permissions.ts';
import { exportCommand, renderExportJob } from '../lib/job-spec/export-job.ts';
import { BROWSE_PORT, renderBrowseJob, renderEditJob, renderFilesJob } from '../lib/job-spec/render.ts';
import { RECEIVE_PORT, renderReceiverJob } from '../lib/job-spec/upload-job.ts';
import { byKind, getPath, type Obj, renderAsync } from './support/kustomize.ts';
import { roleGrants } from './support/role.ts';
import { ROOT } from './support/stack.ts';

const DIR = join(ROOT, 'knative');
/** File functions that answer only after their Job ends; the others answer at once (202, listing). */
const BACKGROUND_FUNCTIONS = new Set(['files-unzip', 'files-zip', 'files-ops', 'files-pull', 'files-compress']);
const FILE_FUNCTIONS = Object.keys(FUNCTIONS).filter((f) => f.startsWith('files-') && !BACKGROUND_FUNCTIONS.has(f));
/** Functions that hold the shared job key: browse sessions (list, read, search, usage), uploads, streamed writes and signed downloads. */
const PULL_EGRESS = 'felis-world-pull-jobs-egress';
const JOB_KEY_FUNCTIONS = new Set([
  'files-list',
  'files-read',
  'files-search',
  'files-upload',
  'files-uploads',
  'files-write',
  'files-download',
  'files-copy',
  'files-usage',
  'files-pull',
  'files-mkdir',
  'files-delete',
  'files-rename',
  'files-batch',
  'files-tail',
]);

/** The schema model of an object's apiVersion and kind: core and API groups, and Knative's. */
async function modelOf(o: Obj): Promise<{ new (data: unknown): { validate(): void } }> {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  const spec = group.endsWith('knative.dev') ? `@kubernetes-models/knative/${group}/${version}/${o.kind}` : `kubernetes-models/${group ? `${group}/${version}` : version}/${o.kind}`;
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
/** Knative Services are named felis-world-<function>, apart from Felis's own Services in the namespace. */
const serviceName = (fn: string) => `felis-world-${fn}`;
/** The components of knative/components/. */
const COMPONENTS = ['eventing', 'kubernetes-auth', 'admission-policy', 'crd'];
const CLUSTER_SCOPED = new Set(['CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
/** The functions' settings: the one ConfigMap, whose name carries the hash of its contents. */
const configOf = (objs: Obj[]) => {
  const maps = objs.filter((o) => o.kind === 'ConfigMap' && /^felis-world-[a-z0-9]{10}$/.test(o.metadata.name));
  assert.equal(maps.length, 1, maps.map((m) => m.metadata.name).join());
  return maps[0]!;
};

// Every render up front, side by side (kustomize takes about a second per render on the shared
// machine): every combination of components, all of them in a second namespace, the default, and
// the variants some tests need.
const OTHER_NS = 'games-two';
const COMBOS = Array.from({ length: 1 << COMPONENTS.length }, (_, m) => COMPONENTS.filter((_c, i) => m & (1 << i)));
const DIGEST = 'sha256:' + 'ab'.repeat(32);
const [DEFAULT, ALL_OTHER, CHANGED, ...RENDERED] = await Promise.all([
  renderAsync(DIR),
  renderAsync(DIR, { components: COMPONENTS, namespace: OTHER_NS }),
  // An operator's edits: the image pinned by digest, two settings changed.
  renderAsync(DIR, {
    components: [],
    image: { newName: 'registry.example.com/felis-world', digest: DIGEST },
    config: { LOG_LEVEL: 'debug', FELIS_DOWNLOAD_BASE_URL: 'https://felis.example.com' },
  }),
  ...COMBOS.map((cs) => renderAsync(DIR, { components: cs })),
]);
const comboOf = (cs: string[]) => RENDERED[COMBOS.findIndex((c) => c.length === cs.length && cs.every((x) => c.includes(x)))]!;
const ALL = comboOf(COMPONENTS);
const NONE = comboOf([]);
const EACH = new Map(COMPONENTS.map((c) => [c, comboOf([c])]));

describe('knative/ manifests', () => {
  const objs = ALL;
  const services = new Map(knativeServices(objs).map((s) => [s.metadata.name.replace(/^felis-world-/, ''), s]));
  const config = configOf(objs);

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

  test('every combination of components (and all of them in a second namespace) renders, validates, adds only its own kinds, and keeps every object in the namespace', async () => {
    const ownKinds: Record<string, string[]> = {
      eventing: ['Broker', 'ApiServerSource', 'PingSource', 'Trigger'],
      'kubernetes-auth': ['ClusterRoleBinding'],
      'admission-policy': ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'],
      crd: ['CustomResourceDefinition'],
    };
    for (const [i, cs] of [...COMBOS.entries(), [-1, COMPONENTS] as const]) {
      const r = i < 0 ? ALL_OTHER : RENDERED[i]!;
      const ns = i < 0 ? OTHER_NS : 'minecraft';
      const what = `[${cs.join(', ')}] in ${ns}`;
      for (const o of r) await assert.doesNotReject(validate(o), `${what}: ${o.kind} ${o.metadata.name}`);
      for (const [c, kinds] of Object.entries(ownKinds)) {
        for (const k of kinds)
          assert.equal(
            r.some((o) => o.kind === k),
            cs.includes(c),
            `${what}: ${k}`,
          );
      }
      assert.equal(knativeServices(r).length, Object.keys(FUNCTIONS).length, what);
      assert.equal(configOf(r).data.FELIS_NAMESPACE, ns, what);
      for (const o of r) {
        if (CLUSTER_SCOPED.has(o.kind)) assert.equal(o.metadata.namespace, undefined, `${what}: ${o.kind} ${o.metadata.name}`);
        else assert.equal(o.metadata.namespace, ns, `${what}: ${o.kind} ${o.metadata.name}`);
        for (const sub of o.kind.endsWith('RoleBinding') ? o.subjects : []) assert.equal(sub.namespace, ns, `${what}: ${o.metadata.name}`);
      }
    }
  });

  test('the namespace is set once (namespace.yaml): every namespaced object, every binding subject and every name that must carry it follows it', () => {
    const clusterNames = new Map<string, Set<string>>();
    for (const [ns, rendered] of [
      ['minecraft', ALL],
      [OTHER_NS, ALL_OTHER],
    ] as const) {
      const names = new Set<string>();
      for (const o of rendered) {
        const what = `${ns}: ${o.kind} ${o.metadata.name}`;
        if (CLUSTER_SCOPED.has(o.kind)) {
          assert.equal(o.metadata.namespace, undefined, what);
          names.add(`${o.kind}/${o.metadata.name}`);
          // Ours are named after the namespace, so two installs never share one (the CRD is Felis's, shared by design).
          if (o.kind !== 'CustomResourceDefinition') assert.ok(o.metadata.name.startsWith(`${ns}.felis-world-`), what);
        } else assert.equal(o.metadata.namespace, ns, what);
        if (o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding') {
          for (const sub of o.subjects) assert.equal(sub.namespace, ns, `${what}: subject ${sub.name}`);
        }
      }
      clusterNames.set(ns, names);
      const cfg = configOf(rendered);
      assert.equal(cfg.data.FELIS_NAMESPACE, ns);
      assert.equal(configFromEnv(cfg.data).namespace, ns);
      const binding = byKind(rendered, 'ValidatingAdmissionPolicyBinding').values().next().value!;
      assert.equal(binding.spec.paramRef.namespace, ns);
      assert.deepEqual(binding.spec.matchResources.namespaceSelector.matchLabels, { 'kubernetes.io/metadata.name': ns });
      assert.equal(binding.spec.policyName, byKind(rendered, 'ValidatingAdmissionPolicy').keys().next().value);
      assert.equal(byKind(rendered, 'Broker').get('felis-world')!.spec.config.namespace, ns);
    }
    const shared = [...clusterNames.get('minecraft')!].filter((n) => clusterNames.get(OTHER_NS)!.has(n));
    assert.deepEqual(shared, ['CustomResourceDefinition/minecraftservers.felis.lolicon.best']);
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

  test('an image pinned by digest reaches the Jobs digest and all', () => {
    const digest = DIGEST;
    const pinned = CHANGED;
    const images = new Set(knativeServices(pinned).map((s) => s.spec.template.spec.containers[0].image));
    assert.deepEqual([...images], [`registry.example.com/felis-world@${digest}`]);
    assert.equal(configFromEnv(configOf(pinned).data).editor?.image, `registry.example.com/felis-world@${digest}`);
  });

  test('changing a setting makes a new ConfigMap name, and every Service refers to it (so each gets a new revision)', () => {
    const changed = CHANGED;
    const before = configOf(NONE).metadata.name;
    const after = configOf(changed).metadata.name;
    assert.notEqual(after, before);
    for (const [rendered, name] of [
      [NONE, before],
      [changed, after],
    ] as const) {
      for (const s of knativeServices(rendered)) assert.equal(s.spec.template.spec.containers[0].envFrom[0].configMapRef.name, name, s.metadata.name);
    }
  });

  test('FELIS_DOWNLOAD_BASE_URL is a setting of the ConfigMap, and files-download reads it from there', () => {
    assert.ok(Object.hasOwn(config.data, 'FELIS_DOWNLOAD_BASE_URL'));
    const dl = services.get('files-download')!.spec.template.spec.containers[0];
    assert.equal(dl.envFrom[0].configMapRef.name, config.metadata.name);
    const own = Object.fromEntries(dl.env.filter((e: { value?: string }) => e.value !== undefined).map((e: { name: string; value: string }) => [e.name, e.value]));
    assert.equal(own.FELIS_DOWNLOAD_BASE_URL, undefined, 'not overridden per Service');
    const set = CHANGED;
    const env = { ...configOf(set).data, ...own };
    assert.equal(configFromEnv(env).downloads?.baseUrl, 'https://felis.example.com');
  });

  test('a Knative Service per function, named felis-world-<function>: scale to zero, cluster-local, /healthz probes, its own bundle', () => {
    assert.deepEqual([...services.keys()].sort(), Object.keys(FUNCTIONS).sort());
    for (const [fn, s] of services) {
      assert.equal(s.metadata.name, serviceName(fn));
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

  test('a request lasts as long as its Service allows: no Knative or Node limit cuts it sooner', () => {
    // Knative's default answer-start limit is 300 s; an upload answers only after its body is in.
    const KNATIVE_RESPONSE_START_DEFAULT = 300;
    let longest = 0;
    for (const [fn, s] of services) {
      const spec = s.spec.template.spec;
      longest = Math.max(longest, spec.timeoutSeconds);
      if (spec.timeoutSeconds <= KNATIVE_RESPONSE_START_DEFAULT) continue;
      assert.ok(spec.responseStartTimeoutSeconds > 0 && spec.responseStartTimeoutSeconds <= spec.timeoutSeconds, `${fn}: responseStartTimeoutSeconds`);
      assert.equal(spec.idleTimeoutSeconds, spec.timeoutSeconds, `${fn}: a paused stream is not cut before the request's end`);
      if (fn === 'files-upload' || fn === 'files-uploads') assert.equal(spec.responseStartTimeoutSeconds, spec.timeoutSeconds, fn);
    }
    assert.deepEqual(
      [...services]
        .filter(([, s]) => s.spec.template.spec.timeoutSeconds > 300)
        .map(([fn]) => fn)
        .sort(),
      ['files-download', 'files-tail', 'files-upload', 'files-uploads'],
    );
    // The functions' own server: no whole-request limit below the longest Service's, keep-alive above queue-proxy's 90 s.
    assert.ok(SERVER_TIMEOUTS.requestMs === 0 || SERVER_TIMEOUTS.requestMs >= longest * 1000);
    assert.ok(SERVER_TIMEOUTS.keepAliveMs > 90_000);
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
      assert.equal(
        c.env.some((e: { name: string }) => e.name === 'FELIS_TOKEN'),
        false,
        `${fn}: no token in plain env`,
      );
      const mount = c.volumeMounts.find((m: { mountPath: string }) => file.startsWith(m.mountPath + '/'));
      assert.ok(mount?.readOnly, `${fn}: ${file} is on a read-only mount`);
      const vol = spec.volumes.find((v: { name: string }) => v.name === mount.name);
      assert.ok(vol?.secret?.secretName, `${fn}: the mount is a Secret`);
      const item = vol.secret.items.find((i: { path: string }) => `${mount.mountPath}/${i.path}` === file);
      assert.ok(item, `${fn}: the Secret key lands at ${file}`);
      assert.equal(c.envFrom[0].configMapRef.name, config.metadata.name, fn);
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

  test('system:auth-delegator is bound only with the kubernetes-auth component: one binding per function, and nothing else cluster-wide', () => {
    assert.equal(byKind(DEFAULT, 'ClusterRoleBinding').size, 0, 'token mode (the default) binds nothing cluster-wide');
    for (const [c, rendered] of EACH) if (c !== 'kubernetes-auth') assert.equal(byKind(rendered, 'ClusterRoleBinding').size, 0, c);
    const withAuth = EACH.get('kubernetes-auth')!;
    const crbs = [...byKind(withAuth, 'ClusterRoleBinding').values()];
    assert.equal(byKind(withAuth, 'ClusterRole').size, 0, 'no ClusterRole of our own');
    for (const b of crbs) {
      assert.deepEqual(b.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' }, b.metadata.name);
      assert.equal(b.subjects.length, 1, b.metadata.name);
    }
    const bound = crbs.map((b) => b.subjects[0].name).sort();
    assert.deepEqual(
      bound,
      knativeServices(withAuth)
        .map((s) => s.spec.template.spec.serviceAccountName)
        .sort(),
    );
  });

  test("the file Jobs' Pods run as a ServiceAccount that gets no API token", () => {
    const name = config.data.FELIS_JOB_SERVICE_ACCOUNT;
    const sa = byKind(objs, 'ServiceAccount').get(name);
    assert.ok(sa, `ServiceAccount ${name}`);
    assert.equal(sa.automountServiceAccountToken, false);
    assert.equal(
      objs.some((o) => o.kind === 'RoleBinding' && o.subjects.some((x: { name: string }) => x.name === name)),
      false,
      'no Role for the Jobs',
    );
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

  test('settling needs no caller: backup and pull Job changes and a 10-minute tick reach the settle function', () => {
    const sources = objs.filter((o) => o.apiVersion === 'sources.knative.dev/v1');
    const apis = sources.filter((o) => o.kind === 'ApiServerSource');
    // Backup Jobs (restore chains) and our pull Jobs (a staged download to place), nothing else.
    assert.deepEqual(
      apis.map((a) => a.spec.resources),
      [
        [{ apiVersion: 'batch/v1', kind: 'Job', selector: { matchLabels: { 'app.kubernetes.io/managed-by': 'felis-backup' } } }],
        [{ apiVersion: 'batch/v1', kind: 'Job', selector: { matchLabels: { 'app.kubernetes.io/managed-by': 'felis-files', 'felis.lolicon.best/files-pull': 'true' } } }],
      ],
    );
    for (const api of apis) {
      assert.equal(api.spec.mode, 'Resource');
      // The watcher may only read Jobs, and it is not a function's identity.
      const watcher = byKind(objs, 'Role').get(api.spec.serviceAccountName)!;
      assert.deepEqual(watcher.rules, [{ apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch'] }]);
    }
    const ping = sources.find((o) => o.kind === 'PingSource')!;
    assert.equal(ping.spec.schedule, '*/10 * * * *');
    const broker = byKind(objs, 'Broker').values().next().value!;
    for (const s of [...apis, ping]) assert.deepEqual(s.spec.sink.ref, { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: broker.metadata.name });
    const triggers = [...byKind(objs, 'Trigger').values()];
    const types = triggers.map((t) => t.spec.filter.attributes.type).sort();
    assert.deepEqual(types, ['dev.knative.apiserver.resource.update', 'dev.knative.sources.ping']);
    for (const t of triggers) {
      assert.equal(t.spec.broker, broker.metadata.name);
      assert.equal(t.spec.subscriber.ref.name, serviceName('settle'));
      assert.ok(t.metadata.name.startsWith('felis-world-'), t.metadata.name);
      // Eventing names the Trigger's OIDC identity <trigger>-oidc-eventing.knative.dev-trigger; within 63 it is not hashed.
      assert.ok(`${t.metadata.name}-oidc-eventing.knative.dev-trigger`.length <= 63, t.metadata.name);
    }
  });

  test("settle scales to zero between ticks: the tick is further apart than Knative's window plus the retention", () => {
    const ping = objs.find((o) => o.kind === 'PingSource')!;
    const every = /^\*\/(\d+) \* \* \* \*$/.exec(ping.spec.schedule);
    assert.ok(every, ping.spec.schedule);
    const tickS = Number(every[1]) * 60;
    const a = services.get('settle')!.spec.template.metadata.annotations;
    const retentionS = Number(/^(\d+)m$/.exec(a['autoscaling.knative.dev/scale-to-zero-pod-retention-period'])![1]) * 60;
    // Knative's stable window (60 s) and scale-to-zero grace (30 s) by default, then the retention.
    assert.ok(tickS > 60 + 30 + retentionS + 60, `a tick every ${tickS} s leaves settle at zero for a while`);
  });

  test("events carry a token: every Trigger's audience is exactly the one the settle function verifies", () => {
    const settle = services.get('settle')!.spec.template.spec.containers[0];
    const own = Object.fromEntries(settle.env.filter((e: { value?: string }) => e.value !== undefined).map((e: { name: string; value: string }) => [e.name, e.value]));
    const verified = authConfigFromEnv({ ...config.data, ...own, FELIS_AUTH_MODE: 'kubernetes' }).eventAudience;
    assert.notEqual(verified, authConfigFromEnv({ ...config.data }).audience, "not the callers' audience");
    const triggers = [...byKind(objs, 'Trigger').values()];
    assert.equal(triggers.length, 2);
    for (const t of triggers) assert.equal(t.spec.subscriber.audience, verified, t.metadata.name);
    // The example binding names the Triggers' OIDC identities as Eventing makes them.
    const example = (loadAll(readFileSync(join(DIR, 'examples', 'settle-events.yaml'), 'utf8')) as Obj[]).find((o) => o.kind === 'ClusterRoleBinding')!;
    assert.deepEqual(example.subjects.map((x: { name: string }) => x.name).sort(), triggers.map((t) => `${t.metadata.name}-oidc-eventing.knative.dev-trigger`).sort());
  });

  test("Eventing is optional: without its component nothing needs Eventing's kinds; the Broker's channel is named", () => {
    for (const rendered of [NONE, ...[...EACH].filter(([c]) => c !== 'eventing').map(([, r]) => r)]) {
      assert.deepEqual(
        rendered.filter((o) => o.apiVersion.includes('eventing.knative.dev') || o.apiVersion.startsWith('sources.knative.dev')).map((o) => o.kind),
        [],
      );
    }
    const broker = byKind(objs, 'Broker').get('felis-world')!;
    assert.equal(broker.metadata.annotations!['eventing.knative.dev/broker.class'], 'MTChannelBasedBroker');
    const channel = byKind(objs, 'ConfigMap').get(broker.spec.config.name)!;
    assert.ok(channel, broker.spec.config.name);
    assert.match(channel.data['channel-template-spec'], /kind: InMemoryChannel/);
  });

  test("the MinecraftServer CRD is only in its component: the default install leaves Felis's CRD alone", () => {
    for (const rendered of [DEFAULT, NONE]) assert.equal(byKind(rendered, 'CustomResourceDefinition').size, 0);
    const crd = byKind(EACH.get('crd')!, 'CustomResourceDefinition').get('minecraftservers.felis.lolicon.best');
    assert.equal(getPath(crd, 'spec.names.kind'), 'MinecraftServer');
  });

  test('the default install is the base plus Eventing; each component adds only its own kinds', () => {
    const kinds = (r: Obj[]) => new Set(r.map((o) => `${o.kind}/${o.metadata.name}`));
    const base = kinds(NONE);
    const added = (c: string) => [...kinds(EACH.get(c)!)].filter((k) => !base.has(k)).map((k) => k.split('/')[0]);
    assert.deepEqual([...kinds(DEFAULT)].sort(), [...kinds(EACH.get('eventing')!)].sort());
    assert.deepEqual(new Set(added('kubernetes-auth')), new Set(['ClusterRoleBinding']));
    assert.deepEqual(new Set(added('admission-policy')), new Set(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']));
    assert.deepEqual(new Set(added('crd')), new Set(['CustomResourceDefinition']));
    assert.deepEqual(new Set(added('eventing')), new Set(['ConfigMap', 'Broker', 'ServiceAccount', 'Role', 'RoleBinding', 'ApiServerSource', 'PingSource', 'Trigger']));
    // The admission policy's parameter holds exactly the functions' settings.
    const pol = EACH.get('admission-policy')!;
    const param = byKind(pol, 'ConfigMap').get(byKind(pol, 'ValidatingAdmissionPolicyBinding').values().next().value!.spec.paramRef.name)!;
    assert.deepEqual(param.data, configOf(pol).data);
    assert.deepEqual(byKind(ALL_OTHER, 'ConfigMap').get(param.metadata.name)!.data, configOf(ALL_OTHER).data);
  });

  test('the example Roles validate, grant only permissions the route table uses, and the viewer changes nothing', async () => {
    const used = new Set<string>();
    for (const p of Object.values(ROUTE_PERMISSIONS)) {
      if (p.kind === 'server') used.add(`${p.verb} minecraftservers/${p.subresource}`);
      if (p.kind === 'nonresource') used.add(`${p.verb} ${p.path}`);
    }
    const examples = ['roles.yaml', 'one-server.yaml', 'settle-events.yaml', 'default-deny.yaml'].flatMap((f) => loadAll(readFileSync(join(DIR, 'examples', f), 'utf8')) as Obj[]);
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
    assert.deepEqual(
      [...grants('felis-world-viewer')].filter((g) => !g.startsWith('get ')),
      [],
    );
    assert.ok(grants('felis-world-editor').has('update minecraftservers/files'));
    assert.ok(grants('felis-world-operator').has('delete minecraftservers/lock'));
    // The per-server example names its server; its binding refers to a Role that exists.
    const perServer = roles.get('felis-world-editor-survival')!;
    assert.ok(perServer.rules.every((r: { resourceNames?: string[] }) => r.resourceNames?.length === 1));
    for (const b of examples.filter((o) => o.kind.endsWith('Binding'))) assert.ok(roles.has(b.roleRef.name), `${b.metadata.name} → ${b.roleRef.name}`);
  });

  test('file Job Pods accept connections only from files-list, files-read, files-search, the upload functions, files-write, files-copy, files-download (it asks a browse session what it signs) and files-usage, only on the serve port', () => {
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
    assert.deepEqual(
      browse.spec!.template.spec!.containers[0]!.ports!.map((p) => p.containerPort),
      [BROWSE_PORT],
    );
    assert.deepEqual(
      receiver.spec!.template.spec!.containers[0]!.ports!.map((p) => p.containerPort),
      [RECEIVE_PORT],
    );
    assert.deepEqual(
      write.spec!.template.spec!.containers[0]!.ports!.map((p) => p.containerPort),
      [BROWSE_PORT],
    );
    assert.ok(
      rule.from.every((f: Obj) => f.podSelector && !f.namespaceSelector && !f.ipBlock),
      'pods of this namespace only',
    );
    const admitted = [...services.entries()].filter(([, svc]) => rule.from.some((f: Obj) => selects(f.podSelector, svc.spec.template.metadata.labels)));
    assert.deepEqual(admitted.map(([fn]) => fn).sort(), ['files-copy', 'files-download', 'files-list', 'files-read', 'files-search', 'files-upload', 'files-uploads', 'files-usage', 'files-write']);
  });

  test('edit session Pods accept connections only from the functions that change files, only on the serve port; no other file Job Pod is selected', () => {
    const np = byKind(objs, 'NetworkPolicy').get('felis-world-edit-jobs')!;
    assert.deepEqual(np.spec.policyTypes, ['Ingress']);
    const settings = configFromEnv(config.data).editor!;
    const base = { ...settings, server: 'survival', opId: 'e0123456789abcde', worldPvc: 'world-survival-0' };
    const edit = renderEditJob({ ...base, tokenSha256: 'a'.repeat(64), idleSeconds: 60, lifetimeSeconds: 540 });
    assert.ok(selects(np.spec.podSelector, edit.spec!.template.metadata!.labels!));
    const others = [
      renderBrowseJob({ ...base, tokenSha256: 'a'.repeat(64), idleSeconds: 60, lifetimeSeconds: 540 }),
      renderFilesJob({ ...base, op: 'read', path: 'a' }),
      renderFilesJob({ ...base, op: 'write', path: 'a', sha256: 'b'.repeat(64), contentTokenSha256: 'a'.repeat(64) }),
    ];
    for (const job of others) assert.equal(selects(np.spec.podSelector, job.spec!.template.metadata!.labels!), false, job.metadata!.name);
    // The world-wide file Job policy selects it too: an edit Pod is a file Job Pod.
    assert.ok(selects(byKind(objs, 'NetworkPolicy').get('felis-world-file-jobs')!.spec.podSelector, edit.spec!.template.metadata!.labels!));
    assert.equal(np.spec.ingress.length, 1);
    const rule = np.spec.ingress[0];
    assert.deepEqual(rule.ports, [{ protocol: 'TCP', port: BROWSE_PORT }]);
    assert.deepEqual(
      edit.spec!.template.spec!.containers[0]!.ports!.map((p) => p.containerPort),
      [BROWSE_PORT],
    );
    assert.ok(
      rule.from.every((f: Obj) => f.podSelector && !f.namespaceSelector && !f.ipBlock),
      'pods of this namespace only',
    );
    const admitted = [...services.entries()].filter(([, svc]) => rule.from.some((f: Obj) => selects(f.podSelector, svc.spec.template.metadata.labels)));
    assert.deepEqual(admitted.map(([fn]) => fn).sort(), ['files-batch', 'files-copy', 'files-delete', 'files-mkdir', 'files-rename', 'files-write']);
    // Every function it admits has the job key, or it could never call one.
    for (const [fn] of admitted) assert.ok(JOB_KEY_FUNCTIONS.has(fn), fn);
  });

  test('export Job Pods accept connections only from files-download, only on the serve port; no file Job Pod is selected', () => {
    const policies = byKind(objs, 'NetworkPolicy');
    assert.deepEqual([...policies.keys()].sort(), [
      'felis-world-edit-jobs',
      'felis-world-export-jobs',
      'felis-world-export-jobs-egress',
      'felis-world-file-jobs',
      'felis-world-file-jobs-egress',
      'felis-world-follow-jobs',
      'felis-world-pull-jobs',
      'felis-world-pull-jobs-egress',
      'felis-world-receiver-jobs-egress',
    ]);
    const np = policies.get('felis-world-export-jobs')!;
    assert.deepEqual(np.spec.policyTypes, ['Ingress']);
    const settings = configFromEnv(config.data).editor!;
    const job = renderExportJob({
      ...settings,
      command: exportCommand(settings.command),
      server: 'survival',
      exportId: '0123456789abcdef',
      worldPvc: 'world-survival-0',
      path: 'a',
      dir: false,
      tokenSha256: 'a'.repeat(64),
      idleSeconds: 60,
    });
    const labels = job.spec!.template.metadata!.labels!;
    assert.ok(selects(np.spec.podSelector, labels));
    assert.equal(selects(policies.get('felis-world-file-jobs')!.spec.podSelector, labels), false);
    assert.equal(
      selects(np.spec.podSelector, renderFilesJob({ ...settings, server: 'survival', opId: '0123456789abcdef', worldPvc: 'w', op: 'read', path: 'a' }).spec!.template.metadata!.labels!),
      false,
    );
    assert.deepEqual(job.spec!.template.spec!.containers[0]!.command, ['/usr/local/bin/felis', 'export']);
    assert.deepEqual(np.spec.ingress.length, 1);
    const rule = np.spec.ingress[0];
    assert.deepEqual(rule.ports, [{ protocol: 'TCP', port: BROWSE_PORT }]);
    assert.deepEqual(
      job.spec!.template.spec!.containers[0]!.ports!.map((p) => p.containerPort),
      [BROWSE_PORT],
    );
    assert.ok(
      rule.from.every((f: Obj) => f.podSelector && !f.namespaceSelector && !f.ipBlock),
      'pods of this namespace only',
    );
    const admitted = [...services.entries()].filter(([, svc]) => rule.from.some((f: Obj) => selects(f.podSelector, svc.spec.template.metadata.labels)));
    assert.deepEqual(
      admitted.map(([fn]) => fn),
      ['files-download'],
    );
  });

  test('the browse, upload, download, pull, log follow and small-change functions read the job key from an optional Secret; no other function has it', () => {
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
      assert.ok(
        vol.secret.items.some((i: { path: string }) => `${mount.mountPath}/${i.path}` === file),
        fn,
      );
      const both = configFromEnv({ ...config.data, FELIS_JOB_KEY_FILE: file });
      assert.equal(both.downloads!.keyFile, file);
      const browse = both.browse!;
      assert.equal(browse.keyFile, file);
      assert.ok(browse.idleSeconds < browse.lifetimeSeconds, 'a session idles out before its lifetime');
    }
  });

  test("felis-world's Job Pods may connect nowhere; Felis's own upload and export Jobs (which call out) are not caught", () => {
    // The pull Jobs' egress is the one exception, tested on its own below.
    const egress = [...byKind(objs, 'NetworkPolicy').values()].filter((p) => p.spec.policyTypes.includes('Egress') && p.metadata.name !== PULL_EGRESS);
    for (const p of egress) {
      assert.deepEqual(p.spec.policyTypes, ['Egress'], p.metadata.name);
      assert.deepEqual(p.spec.egress, [], `${p.metadata.name}: no egress at all (not even DNS: no Job mode calls out)`);
    }
    const caught = (labels: Record<string, string>) => egress.some((p) => selects(p.spec.podSelector, labels));
    const settings = configFromEnv(config.data).editor!;
    const base = { ...settings, server: 'survival', opId: 'b0123456789abcde', worldPvc: 'world-survival-0' };
    const ours = [
      ...(['list', 'read', 'write', 'mkdir', 'delete', 'rename', 'unzip', 'zip', 'search'] as const).map((op) =>
        renderFilesJob({ ...base, op, path: 'a', content: op === 'write' ? Buffer.from('x') : undefined }),
      ),
      renderFilesJob({ ...base, op: 'unzip', path: 'a.zip', async: true }),
      renderFilesJob({ ...base, op: 'delete-many', path: '.', batch: { paths: ['a'] } }),
      renderFilesJob({ ...base, op: 'move-many', path: '.', batch: { moves: [{ from: 'a', to: 'b' }] } }),
      renderFilesJob({ ...base, op: 'chmod-many', path: '.', batch: { files: [{ path: 'a', mode: '644' }] } }),
      renderBrowseJob({ ...base, tokenSha256: 'a'.repeat(64), idleSeconds: 60, lifetimeSeconds: 540 }),
      renderEditJob({ ...base, opId: 'e0123456789abcde', tokenSha256: 'a'.repeat(64), idleSeconds: 60, lifetimeSeconds: 540 }),
      renderReceiverJob({ ...base, tokenSha256: 'a'.repeat(64), once: true, idleSeconds: 10, lifetimeSeconds: 540 }),
      renderReceiverJob({ ...base, tokenSha256: 'a'.repeat(64), once: false, session: 'c'.repeat(32), path: 'big.bin', idleSeconds: 10, lifetimeSeconds: 540 }),
      renderExportJob({
        ...settings,
        command: exportCommand(settings.command),
        server: 'survival',
        exportId: '0123456789abcdef',
        worldPvc: 'w',
        path: 'a',
        dir: true,
        tokenSha256: 'a'.repeat(64),
        idleSeconds: 60,
      }),
    ];
    for (const job of ours) assert.ok(caught(job.spec!.template.metadata!.labels!), job.metadata!.name);
    // Felis's upload Job pulls from a source URL; Felis's export Job pushes to a target URL.
    const felisUpload = renderFilesJob({ ...base, op: 'upload', path: 'a', sourceUrl: 'http://felis-api/x', uploadToken: 't', size: 1, sha256: 'a'.repeat(64) });
    assert.equal(caught(felisUpload.spec!.template.metadata!.labels!), false);
    assert.equal(
      caught({ 'app.kubernetes.io/managed-by': 'felis-export', 'app.kubernetes.io/component': 'world-export', 'felis.lolicon.best/server': 'survival', 'felis.lolicon.best/export-mode': 'files' }),
      false,
    );
  });

  test('only pull Jobs may call out: DNS, and TCP 80/443 of everything but the private and special ranges; only files-pull reaches their cancel port', () => {
    const policies = byKind(objs, 'NetworkPolicy');
    const np = policies.get(PULL_EGRESS)!;
    assert.deepEqual(np.spec.policyTypes, ['Egress']);
    const settings = configFromEnv(config.data).editor!;
    const base = { ...settings, server: 'survival', opId: 'b0123456789abcde', worldPvc: 'world-survival-0' };
    const pull = renderFilesJob({ ...base, op: 'pull', path: 'plugins', url: 'https://example.com/a.jar', async: true, cancelTokenSha256: 'a'.repeat(64) });
    const labels = pull.spec!.template.metadata!.labels!;
    assert.ok(selects(np.spec.podSelector, labels));
    const others = [
      ...(['list', 'read', 'write', 'mkdir', 'delete', 'rename', 'unzip', 'zip', 'search', 'copy'] as const).map((op) =>
        renderFilesJob({ ...base, op, path: 'a', content: op === 'write' ? Buffer.from('x') : undefined }),
      ),
      renderBrowseJob({ ...base, tokenSha256: 'a'.repeat(64), idleSeconds: 60, lifetimeSeconds: 540 }),
      renderReceiverJob({ ...base, tokenSha256: 'a'.repeat(64), once: true, idleSeconds: 10, lifetimeSeconds: 540 }),
    ];
    for (const job of others) assert.equal(selects(np.spec.podSelector, job.spec!.template.metadata!.labels!), false, job.metadata!.name);
    const [dns, web] = np.spec.egress;
    assert.deepEqual(dns.ports.map((p: Obj) => `${p.protocol}/${p.port}`).sort(), ['TCP/53', 'UDP/53']);
    assert.deepEqual(dns.to[0].podSelector.matchLabels, { 'k8s-app': 'kube-dns' });
    assert.deepEqual(
      web.ports.map((p: Obj) => `${p.protocol}/${p.port}`),
      ['TCP/80', 'TCP/443'],
    );
    const blocks = Object.fromEntries(web.to.map((t: Obj) => [t.ipBlock.cidr, t.ipBlock.except]));
    assert.deepEqual(Object.keys(blocks).sort(), ['0.0.0.0/0', '::/0']);
    for (const cidr of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '127.0.0.0/8', '100.64.0.0/10', '0.0.0.0/8']) assert.ok(blocks['0.0.0.0/0'].includes(cidr), cidr);
    for (const cidr of ['fc00::/7', 'fe80::/10', '::ffff:0:0/96', '64:ff9b::/96']) assert.ok(blocks['::/0'].includes(cidr), cidr);
    // Ingress: files-pull alone, on the serving port the pull Job's cancel listens on.
    const ing = policies.get('felis-world-pull-jobs')!;
    assert.ok(selects(ing.spec.podSelector, labels));
    assert.deepEqual(ing.spec.ingress[0].ports, [{ protocol: 'TCP', port: BROWSE_PORT }]);
    assert.deepEqual(
      pull.spec!.template.spec!.containers[0]!.ports!.map((p) => p.containerPort),
      [BROWSE_PORT],
    );
    const admitted = [...services.entries()].filter(([, svc]) => ing.spec.ingress[0].from.some((f: Obj) => selects(f.podSelector, svc.spec.template.metadata.labels)));
    assert.deepEqual(
      admitted.map(([fn]) => fn),
      ['files-pull'],
    );
  });

  test('log follow Job Pods accept connections only from files-tail, only on the serve port; no other file Job Pod is selected', () => {
    const policies = byKind(objs, 'NetworkPolicy');
    const np = policies.get('felis-world-follow-jobs')!;
    assert.deepEqual(np.spec.policyTypes, ['Ingress']);
    const settings = configFromEnv(config.data).editor!;
    const base = { ...settings, server: 'survival', opId: 'c0123456789abcde', worldPvc: 'world-survival-0' };
    const follow = renderFilesJob({ ...base, op: 'tail', path: 'logs/latest.log', follow: true, followTokenSha256: 'a'.repeat(64) });
    assert.ok(selects(np.spec.podSelector, follow.spec!.template.metadata!.labels!));
    assert.deepEqual(np.spec.ingress[0].ports, [{ protocol: 'TCP', port: BROWSE_PORT }]);
    assert.deepEqual(
      follow.spec!.template.spec!.containers[0]!.ports!.map((p) => p.containerPort),
      [BROWSE_PORT],
    );
    const others = [renderFilesJob({ ...base, op: 'tail', path: 'logs/latest.log' }), renderFilesJob({ ...base, op: 'read', path: 'a' })];
    for (const job of others) assert.equal(selects(np.spec.podSelector, job.spec!.template.metadata!.labels!), false, job.metadata!.name);
    const admitted = [...services.entries()].filter(([, svc]) => np.spec.ingress[0].from.some((f: Obj) => selects(f.podSelector, svc.spec.template.metadata.labels)));
    assert.deepEqual(
      admitted.map(([fn]) => fn),
      ['files-tail'],
    );
    for (const [fn] of admitted) assert.ok(JOB_KEY_FUNCTIONS.has(fn), fn);
  });

  test('the default-deny example allows what Knative needs to reach the functions, and the functions what they call', () => {
    const recipe = loadAll(readFileSync(join(DIR, 'examples', 'default-deny.yaml'), 'utf8')) as Obj[];
    const deny = recipe.find((o) => o.metadata.name === 'felis-world-default-deny')!;
    assert.deepEqual(deny.spec, { podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    const fnLabels = services.get('files-read')!.spec.template.metadata.labels;
    const forFunctions = recipe.filter((p) => p !== deny && selects(p.spec.podSelector, fnLabels));
    const inPorts = forFunctions.flatMap((p) => (p.spec.ingress ?? []).flatMap((r: Obj) => r.ports.map((x: { port: number }) => x.port)));
    assert.deepEqual([...new Set(inPorts)].sort(), [8012, 9090], 'queue-proxy from the activator and gateway; metrics for the autoscaler');
    const outPorts = new Set(forFunctions.flatMap((p) => (p.spec.egress ?? []).flatMap((r: Obj) => r.ports.map((x: { port: number }) => x.port))));
    for (const port of [443, 6443, 8420, 53]) assert.ok(outPorts.has(port), `functions may reach port ${port}`);
    const adapter = recipe.find((p) => selects(p.spec.podSelector, { 'eventing.knative.dev/source': 'apiserver-source-controller' }));
    assert.ok(adapter, "the ApiServerSource adapter's egress");
  });
});

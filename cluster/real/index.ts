/**
 * The cluster tier's backend: the same `ClusterHarness` the embedded cluster offers, over a real
 * kube-apiserver and kube-controller-manager (v1.20, started by
 * `test/cluster-tier/control-plane/up.sh`). What is ours here is only what a real cluster would get
 * from its nodes and from a test harness:
 *
 * - the kubelet (`cluster/kubelet/real-kubelet.ts`): Node `local`, binding, Pod status, the Job
 *   program as local processes, `containerLogs` over HTTPS behind the real `pods/log` proxy;
 * - a counting proxy (`proxy.ts`) between client-node and the apiserver, for `counts()` and
 *   `faults.failNext()`;
 * - admin writes for `setRbacManifest` (the Role is replaced, then the change is awaited with
 *   SubjectAccessReviews) and `setJobConditions` (`PATCH jobs/{name}/status`).
 *
 * Everything else — validation, RBAC, selectors, patch handling, optimistic concurrency, the Job
 * controller, garbage collection — is the real server's.
 *
 * Starting one wipes namespace `minecraft` (Jobs, Pods, PVCs, MinecraftServers): the control plane
 * outlives a test stack, so each stack starts from nothing. One at a time per control plane.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeConfig, V1JobCondition, V1Pod } from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';
import { Faults } from '../faults.ts';
import type { ClusterHarness } from '../harness.ts';
import { tokenKubeConfig, tokenKubeconfigYaml } from '../kubeconfig.ts';
import type { PodTiming, ProgramFn } from '../kubelet/index.ts';
import { type RealKubelet, startRealKubelet } from '../kubelet/real-kubelet.ts';
import { Recorder } from '../records.ts';
import { AdminClient, applyManifest, type ControlPlaneEnv, sleep, wipeNamespace } from './admin.ts';
import { type CountingProxy, startCountingProxy } from './proxy.ts';

type Any = any;

export interface ClusterLogger {
  info(...a: unknown[]): void;
  warn(...a: unknown[]): void;
}

export interface StartRealClusterOptions {
  env: ControlPlaneEnv;
  /** Worlds live under `<dataDir>/worlds/<server>`, as in the embedded cluster. */
  dataDir: string;
  /** The functions' Role (and RoleBinding), applied at start like the embedded cluster loads its manifest. Default knative/rbac.yaml. */
  rbacManifest?: string;
  namespace?: string;
  podTiming?: (pod: V1Pod) => PodTiming;
  program?: ProgramFn;
  claimPath?: (claim: string, namespace: string) => string | undefined;
  backoffScale?: number;
  logger?: ClusterLogger;
}

export interface RealCluster extends ClusterHarness {
  /** The real apiserver (the proxy is `url`). */
  apiserverUrl: string;
  admin: AdminClient;
  kubelet: RealKubelet;
}

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const silent: ClusterLogger = { info() {}, warn() {} };

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
}

/** `<group>|<verb>|<resource>` for every grant of the Roles in a manifest. */
function grantsOf(text: string): Set<string> {
  const out = new Set<string>();
  for (const doc of loadAll(text) as Any[]) {
    if (doc?.kind !== 'Role') continue;
    for (const r of (doc.rules ?? []) as Rule[]) {
      for (const g of r.apiGroups ?? ['']) for (const v of r.verbs) for (const res of r.resources ?? []) out.add(`${g}|${v}|${res}`);
    }
  }
  return out;
}

let active: string | undefined;

export async function startRealCluster(opts: StartRealClusterOptions): Promise<RealCluster> {
  if (active) throw new Error(`a real-cluster stack is already open (${active}): the cluster tier runs one stack at a time`);
  active = opts.dataDir;
  const logger = opts.logger ?? silent;
  const ns = opts.namespace ?? 'minecraft';
  const env = opts.env;
  const admin = new AdminClient(env.K8S_URL, env.ADMIN_TOKEN);
  let kubelet: RealKubelet | undefined;
  let proxy: CountingProxy | undefined;
  try {
    await wipeNamespace(admin, ns);
    const faults = new Faults();
    const recorder = new Recorder();
    kubelet = await startRealKubelet({
      admin,
      dataDir: opts.dataDir,
      repoRoot: REPO_ROOT,
      podTiming: opts.podTiming,
      program: opts.program,
      claimPath: opts.claimPath,
      faults,
      recorder,
      logger,
      backoffScale: opts.backoffScale,
    });
    // up.sh's per-function identities: SA_TOKENS=<sa>=<token>,... (users system:serviceaccount:<ns>:<sa>).
    const saTokens = new Map(
      (env.SA_TOKENS ?? '')
        .split(',')
        .filter(Boolean)
        .map((kv) => kv.split('=') as [string, string]),
    );
    const users = new Map([[env.ADMIN_TOKEN, 'admin'], [env.FUNCTION_TOKEN, env.FUNCTION_USER], ...[...saTokens].map(([sa, t]) => [t, `system:serviceaccount:${ns}:${sa}`] as [string, string])]);
    proxy = await startCountingProxy({ upstream: env.K8S_URL, users, faults, logger });
    const url = proxy.url;
    const functionGrants = grantsOf(readFileSync(join(REPO_ROOT, 'knative/rbac.yaml'), 'utf8'));

    const kubeConfig = (token: string): KubeConfig => tokenKubeConfig(url, token, 'cluster-tier', ns);

    /** Waits until RBAC answers, for the function's user, exactly the grants of `want`. */
    const awaitRbac = async (want: Set<string>) => {
      const all = new Set([...functionGrants, ...want]);
      const deadline = Date.now() + 15_000;
      for (;;) {
        let wrong: string | undefined;
        for (const g of all) {
          const [group, verb, res] = g.split('|') as [string, string, string];
          const [resource, subresource] = res.split('/');
          const r = await admin.must('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: { user: env.FUNCTION_USER, resourceAttributes: { namespace: ns, verb, group, resource, subresource } },
          });
          if (!!r.body.status?.allowed !== want.has(g)) {
            wrong = g;
            break;
          }
        }
        if (!wrong) return;
        if (Date.now() > deadline) throw new Error(`RBAC did not converge within 15 s (${wrong})`);
        await sleep(50);
      }
    };

    const applyRbac = async (path: string) => {
      const text = readFileSync(path, 'utf8');
      await applyManifest(admin, text, { namespace: ns, kinds: ['Role', 'RoleBinding'] });
      await awaitRbac(grantsOf(text));
    };
    await applyRbac(opts.rbacManifest ?? join(REPO_ROOT, 'knative/rbac.yaml'));

    const theKubelet = kubelet;
    const theProxy = proxy;
    let closing: Promise<void> | undefined;
    return {
      url,
      apiserverUrl: env.K8S_URL,
      admin,
      kubelet: theKubelet,
      adminToken: env.ADMIN_TOKEN,
      tokenFor(namespace, serviceAccount) {
        const perFunction = namespace === ns ? saTokens.get(serviceAccount) : undefined;
        if (perFunction) return perFunction;
        if (`system:serviceaccount:${namespace}:${serviceAccount}` !== env.FUNCTION_USER) {
          throw new Error(`the cluster tier has a token only for ${env.FUNCTION_USER}`);
        }
        return env.FUNCTION_TOKEN;
      },
      kubeConfig,
      kubeconfigYaml: (token) => tokenKubeconfigYaml(url, token, 'cluster-tier', ns),
      faults: {
        failNext: (m) => faults.failNext(m),
        pod: (selector, b) => faults.pod(selector, b),
        clear: () => faults.clear(),
      },
      setRbacManifest: applyRbac,
      async requestToken(namespace, serviceAccount, audiences) {
        const sas = `/api/v1/namespaces/${namespace}/serviceaccounts`;
        const made = await admin.call('POST', sas, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: serviceAccount } });
        if (made.status !== 201 && made.status !== 409) throw new Error(`creating ServiceAccount ${namespace}/${serviceAccount}: HTTP ${made.status}`);
        const r = await admin.must('POST', `${sas}/${serviceAccount}/token`, {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { audiences, expirationSeconds: 3600 },
        });
        return r.body.status.token as string;
      },
      async applyRbac(yaml) {
        await applyManifest(admin, yaml, { namespace: ns, kinds: ['ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'] });
      },
      async deleteRbac(kind, name, namespace = ns) {
        const path = {
          Role: `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles/${name}`,
          RoleBinding: `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings/${name}`,
          ClusterRole: `/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`,
          ClusterRoleBinding: `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${name}`,
        }[kind];
        const r = await admin.call('DELETE', path);
        if (r.status !== 200 && r.status !== 202 && r.status !== 404) throw new Error(`deleting ${kind} ${name}: HTTP ${r.status}`);
      },
      counts: (user) => theProxy.counter.counts(user),
      resetCounts: () => theProxy.counter.reset(),
      podRecord: (opId) => recorder.get(opId),
      async setJobConditions(namespace, name, conditions: V1JobCondition[]) {
        const now = `${new Date().toISOString().slice(0, 19)}Z`;
        const t = (d: Date | string | undefined) => (d === undefined ? undefined : typeof d === 'string' ? d : `${d.toISOString().slice(0, 19)}Z`);
        const conds = conditions.map((c) => ({
          type: c.type,
          status: c.status ?? 'True',
          ...(c.reason !== undefined ? { reason: c.reason } : {}),
          ...(c.message !== undefined ? { message: c.message } : {}),
          lastProbeTime: t(c.lastProbeTime as Date | string | undefined) ?? now,
          lastTransitionTime: t(c.lastTransitionTime as Date | string | undefined) ?? now,
        }));
        const path = `/apis/batch/v1/namespaces/${namespace}/jobs/${name}`;
        // The Job controller writes the status itself once the Job's Pod runs, and that write can
        // drop conditions written before it (a sync that read the Job earlier writes the whole
        // status it computed then): write them until two reads a second apart still show them.
        const kept = async () => {
          const have = ((await admin.must('GET', path)).body.status?.conditions ?? []) as { type: string; status: string }[];
          return conds.every((c) => have.some((h) => h.type === c.type && h.status === c.status));
        };
        const deadline = Date.now() + 15_000;
        for (;;) {
          await admin.must('PATCH', `${path}/status`, { status: { conditions: conds } }, 'application/merge-patch+json');
          await sleep(300);
          if ((await kept()) && (await sleep(1_000)) === undefined && (await kept())) return;
          if (Date.now() > deadline) throw new Error(`Job ${namespace}/${name} did not keep the conditions written to it`);
        }
      },
      close() {
        closing ??= (async () => {
          try {
            await theProxy.close();
            await theKubelet.close();
            await admin.close();
          } finally {
            active = undefined;
          }
        })();
        return closing;
      },
    };
  } catch (err) {
    await proxy?.close().catch(() => undefined);
    await kubelet?.close().catch(() => undefined);
    await admin.close().catch(() => undefined);
    active = undefined;
    throw err;
  }
}

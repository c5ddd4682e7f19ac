/**
 * A small admin client for a real kube-apiserver (the cluster test tier's v1.20 control plane):
 * plain HTTPS with the admin bearer token and no certificate verification (the apiserver's
 * certificate is self-signed), plus the few operations the tier needs around the tests: reading
 * `up.sh`'s env file, applying a manifest, and wiping the test namespace between stacks.
 *
 * Not product code, and not the functions' path: the functions talk through client-node.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { loadAll } from 'js-yaml';
import { type AdminClient, HttpError } from '../admin-client.ts';

type Any = any;

/** `<workdir>/env` as written by `test/cluster-tier/control-plane/up.sh`. */
export interface ControlPlaneEnv {
  K8S_URL: string;
  ADMIN_TOKEN: string;
  FUNCTION_TOKEN: string;
  FUNCTION_USER: string;
  K8S_WORKDIR?: string;
  [k: string]: string | undefined;
}

export function readControlPlaneEnv(path: string): ControlPlaneEnv {
  const out: Record<string, string> = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  for (const k of ['K8S_URL', 'ADMIN_TOKEN', 'FUNCTION_TOKEN', 'FUNCTION_USER']) {
    if (!out[k]) throw new Error(`${path}: ${k} is missing (is this an env file written by up.sh?)`);
  }
  return out as ControlPlaneEnv;
}

export { AdminClient, type AdminReply, HttpError, insecureAgent } from '../admin-client.ts';

/** Where the kinds our manifests hold live in the API. */
function collectionPath(doc: Any, defaultNamespace: string): string {
  const ns = doc.metadata?.namespace ?? defaultNamespace;
  switch (`${doc.apiVersion}/${doc.kind}`) {
    case 'v1/ServiceAccount':
      return `/api/v1/namespaces/${ns}/serviceaccounts`;
    case 'v1/Namespace':
      return '/api/v1/namespaces';
    case 'rbac.authorization.k8s.io/v1/Role':
      return `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`;
    case 'rbac.authorization.k8s.io/v1/RoleBinding':
      return `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`;
    case 'rbac.authorization.k8s.io/v1/ClusterRole':
      return '/apis/rbac.authorization.k8s.io/v1/clusterroles';
    case 'rbac.authorization.k8s.io/v1/ClusterRoleBinding':
      return '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
    case 'apiextensions.k8s.io/v1/CustomResourceDefinition':
      return '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    default:
      throw new Error(`cannot apply ${doc.apiVersion} ${doc.kind}: not a kind the cluster tier knows`);
  }
}

export interface ApplyOptions {
  namespace?: string;
  /** Only documents of these kinds (e.g. `['Role']`). */
  kinds?: string[];
}

/**
 * Creates every document of a YAML manifest, or replaces it when it exists (PUT with the current
 * resourceVersion), in file order. Waits for a CRD to be Established and its resources served.
 * Returns `<Kind>/<name>` for each document applied.
 */
export async function applyManifest(admin: AdminClient, text: string, opts: ApplyOptions = {}): Promise<string[]> {
  const ns = opts.namespace ?? 'minecraft';
  const done: string[] = [];
  for (const doc of loadAll(text) as Any[]) {
    if (!doc || typeof doc !== 'object') continue;
    if (opts.kinds && !opts.kinds.includes(doc.kind)) continue;
    const coll = collectionPath(doc, ns);
    if (coll.includes('/namespaces/')) doc.metadata = { ...doc.metadata, namespace: doc.metadata?.namespace ?? ns };
    const created = await admin.call('POST', coll, doc);
    if (created.status === 409) {
      const path = `${coll}/${doc.metadata.name}`;
      for (let attempt = 0; ; attempt++) {
        const cur = await admin.must('GET', path);
        const next = { ...doc, metadata: { ...doc.metadata, resourceVersion: cur.body.metadata.resourceVersion } };
        // A ServiceAccount's token secrets are the controller's: keep them.
        if (doc.kind === 'ServiceAccount' && cur.body.secrets && !doc.secrets) next.secrets = cur.body.secrets;
        const put = await admin.call('PUT', path, next);
        if (put.status === 409 && attempt < 5) continue;
        if (put.status < 200 || put.status >= 300) throw new HttpError(`PUT ${path}`, put);
        break;
      }
    } else if (created.status < 200 || created.status >= 300) {
      throw new HttpError(`POST ${coll}`, created);
    }
    if (doc.kind === 'CustomResourceDefinition') await waitCrdServed(admin, doc, ns);
    done.push(`${doc.kind}/${doc.metadata.name}`);
  }
  return done;
}

async function waitCrdServed(admin: AdminClient, crd: Any, ns: string): Promise<void> {
  const name = crd.metadata.name;
  const version = (crd.spec.versions as Any[]).find((v) => v.served)?.name;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const cur = await admin.must('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    const established = (cur.body.status?.conditions ?? []).some((c: Any) => c.type === 'Established' && c.status === 'True');
    if (established) {
      const list = await admin.call('GET', `/apis/${crd.spec.group}/${version}/namespaces/${ns}/${crd.spec.names.plural}`);
      if (list.status === 200) return;
    }
    if (Date.now() > deadline) throw new Error(`CRD ${name} not Established and served within 30 s`);
    await sleep(100);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Leaves namespace `ns` without Jobs, Pods, PVCs and MinecraftServers, so each test stack starts
 * from nothing: Jobs are deleted with Background propagation, Pods with grace period 0 (no kubelet
 * may be left to finish a graceful deletion), PVCs lose the `pvc-protection` finalizer (the tier's
 * controller-manager runs no pvc-protection controller). Waits until all four lists are empty.
 */
export async function wipeNamespace(admin: AdminClient, ns = 'minecraft', timeoutMs = 60_000): Promise<void> {
  const jobs = `/apis/batch/v1/namespaces/${ns}/jobs`;
  const pods = `/api/v1/namespaces/${ns}/pods`;
  const pvcs = `/api/v1/namespaces/${ns}/persistentvolumeclaims`;
  const servers = `/apis/felis.lolicon.best/v1alpha1/namespaces/${ns}/minecraftservers`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left: string[] = [];
    const jl = await admin.must('GET', jobs);
    for (const j of jl.body.items as Any[]) {
      left.push(`job ${j.metadata.name}`);
      if (!j.metadata.deletionTimestamp || j.metadata.finalizers?.length) {
        await admin.call('DELETE', `${jobs}/${j.metadata.name}`, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' });
      }
      if (j.metadata.deletionTimestamp && j.metadata.finalizers?.length) {
        await admin.call('PATCH', `${jobs}/${j.metadata.name}`, { metadata: { finalizers: null } }, 'application/merge-patch+json');
      }
    }
    const pl = await admin.must('GET', pods);
    for (const p of pl.body.items as Any[]) {
      left.push(`pod ${p.metadata.name}`);
      if (p.metadata.finalizers?.length) {
        await admin.call('PATCH', `${pods}/${p.metadata.name}`, { metadata: { finalizers: null } }, 'application/merge-patch+json');
      }
      await admin.call('DELETE', `${pods}/${p.metadata.name}`, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 });
    }
    const cl = await admin.must('GET', pvcs);
    for (const c of cl.body.items as Any[]) {
      left.push(`pvc ${c.metadata.name}`);
      if (!c.metadata.deletionTimestamp) await admin.call('DELETE', `${pvcs}/${c.metadata.name}`);
      await admin.call('PATCH', `${pvcs}/${c.metadata.name}`, { metadata: { finalizers: null } }, 'application/merge-patch+json');
    }
    const sl = await admin.call('GET', servers);
    if (sl.status === 200) {
      for (const s of sl.body.items as Any[]) {
        left.push(`minecraftserver ${s.metadata.name}`);
        await admin.call('DELETE', `${servers}/${s.metadata.name}`);
      }
    }
    if (left.length === 0) return;
    if (Date.now() > deadline) throw new Error(`namespace ${ns} not empty after ${timeoutMs} ms: ${left.slice(0, 10).join(', ')}`);
    await sleep(200);
  }
}

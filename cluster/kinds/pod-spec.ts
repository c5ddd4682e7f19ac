/**
 * Pod spec defaulting (`SetDefaults_PodSpec`, `SetDefaults_Container`) and the part of
 * `ValidatePodSpec` this project can trip over: volumes, containers, mounts, restartPolicy.
 *
 * @module
 */

import { type FieldError, fieldErr } from '../errors.ts';
import { isDNS1123Label, validateAnnotations, validateLabels } from '../validation.ts';

type Any = any;

const VOLUME_SOURCES = ['persistentVolumeClaim', 'emptyDir', 'hostPath', 'configMap', 'secret', 'projected', 'downwardAPI', 'nfs', 'csi', 'ephemeral', 'image'];

/** `imagePullPolicy` default: Always for `:latest` or an untagged image, else IfNotPresent. */
export function defaultPullPolicy(image: string | undefined): string {
  if (!image) return 'IfNotPresent';
  if (image.includes('@')) return 'IfNotPresent';
  const lastSlash = image.lastIndexOf('/');
  const lastPart = image.slice(lastSlash + 1);
  const colon = lastPart.lastIndexOf(':');
  if (colon < 0) return 'Always';
  return lastPart.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultContainer(c: Any): void {
  if (!c || typeof c !== 'object') return;
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  c.imagePullPolicy ??= defaultPullPolicy(c.image);
  c.resources ??= {};
  for (const p of Array.isArray(c.ports) ? c.ports : []) if (p && typeof p === 'object') p.protocol ??= 'TCP';
  for (const e of Array.isArray(c.env) ? c.env : []) {
    if (e?.valueFrom?.fieldRef) e.valueFrom.fieldRef.apiVersion ??= 'v1';
  }
}

/** Defaults of a pod spec, in a template or a Pod. */
export function defaultPodSpec(spec: Any): void {
  if (!spec || typeof spec !== 'object') return;
  // The v1 conversion keeps the deprecated `serviceAccount` in step with `serviceAccountName`,
  // in every PodSpec (a Job's template too), and reads it when the new field is empty.
  if (!spec.serviceAccountName && typeof spec.serviceAccount === 'string' && spec.serviceAccount) spec.serviceAccountName = spec.serviceAccount;
  if (spec.serviceAccountName) spec.serviceAccount = spec.serviceAccountName;
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.securityContext ??= {};
  spec.schedulerName ??= 'default-scheduler';
  for (const c of Array.isArray(spec.containers) ? spec.containers : []) defaultContainer(c);
  for (const c of Array.isArray(spec.initContainers) ? spec.initContainers : []) defaultContainer(c);
  for (const v of Array.isArray(spec.volumes) ? spec.volumes : []) {
    if (v?.configMap) v.configMap.defaultMode ??= 420;
    if (v?.secret) v.secret.defaultMode ??= 420;
    if (v?.hostPath) v.hostPath.type ??= '';
  }
}

const SUFFIX: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A resource quantity's value (enough precision to compare requests with limits). */
export function quantityValue(q: unknown): number {
  if (typeof q === 'number') return q;
  const m = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/.exec(String(q));
  if (!m) return Number.NaN;
  if (m[2]) return Number(m[1] + m[2]);
  return Number(m[1]) * SUFFIX[m[3] ?? '']!;
}

const QOS_RESOURCES = ['cpu', 'memory'];

/** `GetPodQOS`: Guaranteed, Burstable or BestEffort, from the (defaulted) containers' resources. */
export function podQosClass(spec: Any): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const requests = new Map<string, number>();
  const limits = new Map<string, number>();
  let guaranteed = true;
  const all = [...(Array.isArray(spec?.containers) ? spec.containers : []), ...(Array.isArray(spec?.initContainers) ? spec.initContainers : [])];
  for (const c of all) {
    for (const [name, q] of Object.entries((c?.resources?.requests ?? {}) as Record<string, unknown>)) {
      const v = quantityValue(q);
      if (QOS_RESOURCES.includes(name) && v > 0) requests.set(name, (requests.get(name) ?? 0) + v);
    }
    const found = new Set<string>();
    for (const [name, q] of Object.entries((c?.resources?.limits ?? {}) as Record<string, unknown>)) {
      const v = quantityValue(q);
      if (QOS_RESOURCES.includes(name) && v > 0) {
        found.add(name);
        limits.set(name, (limits.get(name) ?? 0) + v);
      }
    }
    if (!QOS_RESOURCES.every((r) => found.has(r))) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, v] of requests) if (limits.get(name) !== v) guaranteed = false;
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

/** Pod-only defaults and admission (ServiceAccount, Priority, DefaultTolerationSeconds). */
export function defaultPodOnly(spec: Any): void {
  // SetDefaults_Pod: a limit without a request defaults the request.
  for (const c of [...(Array.isArray(spec.containers) ? spec.containers : []), ...(Array.isArray(spec.initContainers) ? spec.initContainers : [])]) {
    const lim = c?.resources?.limits;
    if (!lim || typeof lim !== 'object') continue;
    c.resources.requests ??= {};
    for (const [k, v] of Object.entries(lim)) c.resources.requests[k] ??= v;
  }
  spec.enableServiceLinks ??= true;
  spec.serviceAccountName ??= spec.serviceAccount ?? 'default';
  spec.serviceAccount ??= spec.serviceAccountName;
  spec.priority ??= 0;
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
  const tolerations: Any[] = Array.isArray(spec.tolerations) ? spec.tolerations : [];
  for (const taint of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    if (!tolerations.some((t) => t?.key === taint)) {
      tolerations.push({ key: taint, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
    }
  }
  spec.tolerations = tolerations;
}

function validateVolumes(volumes: Any, path: string): { errs: FieldError[]; names: Set<string> } {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  if (volumes === undefined || volumes === null) return { errs, names };
  if (!Array.isArray(volumes)) return { errs: [fieldErr.invalid(path, String(volumes), 'must be a list')], names };
  volumes.forEach((v: Any, i: number) => {
    const p = `${path}[${i}]`;
    const name = v?.name;
    if (!name) errs.push(fieldErr.required(`${p}.name`));
    else {
      for (const m of isDNS1123Label(name)) errs.push(fieldErr.invalid(`${p}.name`, name, m));
      if (names.has(name)) errs.push(fieldErr.duplicate(`${p}.name`, name));
      names.add(name);
    }
    const sources = VOLUME_SOURCES.filter((s) => v && v[s] !== undefined && v[s] !== null);
    if (sources.length === 0) errs.push(fieldErr.required(p, 'must specify a volume type'));
    else if (sources.length > 1) errs.push(fieldErr.forbidden(`${p}.${sources[1]}`, 'may not specify more than 1 volume type'));
    if (v?.persistentVolumeClaim && !v.persistentVolumeClaim.claimName) {
      errs.push(fieldErr.required(`${p}.persistentVolumeClaim.claimName`));
    }
  });
  return { errs, names };
}

function validateContainers(containers: Any, path: string, volumes: Set<string>, required: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (!Array.isArray(containers) || containers.length === 0) {
    if (required) errs.push(fieldErr.required(path));
    return errs;
  }
  const names = new Set<string>();
  containers.forEach((c: Any, i: number) => {
    const p = `${path}[${i}]`;
    const name = c?.name;
    if (!name) errs.push(fieldErr.required(`${p}.name`));
    else {
      for (const m of isDNS1123Label(name)) errs.push(fieldErr.invalid(`${p}.name`, name, m));
      if (names.has(name)) errs.push(fieldErr.duplicate(`${p}.name`, name));
      names.add(name);
    }
    if (!c?.image) errs.push(fieldErr.required(`${p}.image`));
    const mountPaths = new Set<string>();
    (Array.isArray(c?.volumeMounts) ? c.volumeMounts : []).forEach((m: Any, j: number) => {
      const mp = `${p}.volumeMounts[${j}]`;
      if (!m?.name) errs.push(fieldErr.required(`${mp}.name`));
      else if (!volumes.has(m.name)) errs.push(fieldErr.notFound(`${mp}.name`, m.name));
      if (!m?.mountPath) errs.push(fieldErr.required(`${mp}.mountPath`));
      else {
        if (mountPaths.has(m.mountPath)) errs.push(fieldErr.invalid(`${mp}.mountPath`, m.mountPath, 'must be unique'));
        mountPaths.add(m.mountPath);
      }
    });
    (Array.isArray(c?.env) ? c.env : []).forEach((e: Any, j: number) => {
      if (!e?.name) errs.push(fieldErr.required(`${p}.env[${j}].name`));
    });
  });
  return errs;
}

/** The subset of `ValidatePodSpec` we enforce. */
export function validatePodSpec(spec: Any, path: string): FieldError[] {
  if (!spec || typeof spec !== 'object') return [fieldErr.required(`${path}.containers`)];
  const { errs, names } = validateVolumes(spec.volumes, `${path}.volumes`);
  errs.push(...validateContainers(spec.containers, `${path}.containers`, names, true));
  errs.push(...validateContainers(spec.initContainers, `${path}.initContainers`, names, false));
  const rp = spec.restartPolicy;
  if (rp !== 'Always' && rp !== 'OnFailure' && rp !== 'Never') {
    if (!rp) errs.push(fieldErr.required(`${path}.restartPolicy`));
    else errs.push(fieldErr.notSupported(`${path}.restartPolicy`, rp, ['Always', 'OnFailure', 'Never']));
  }
  for (const f of ['terminationGracePeriodSeconds', 'activeDeadlineSeconds']) {
    if (typeof spec[f] === 'number' && spec[f] < 0) {
      errs.push(fieldErr.invalid(`${path}.${f}`, spec[f], 'must be greater than or equal to 0'));
    }
  }
  return errs;
}

/** `ValidatePodTemplateSpec`: labels and annotations at `<path>.labels`, the spec at `<path>.spec`. */
export function validatePodTemplateSpec(template: Any, path: string): FieldError[] {
  const meta = template?.metadata ?? {};
  return [...validateLabels(meta.labels, `${path}.labels`), ...validateAnnotations(meta.annotations, `${path}.annotations`), ...validatePodSpec(template?.spec, `${path}.spec`)];
}

/**
 * Server-side printing: `kubectl get` asks for `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`
 * and prints the `Table` the apiserver returns (columns, one row per object). The rows are the
 * apiserver's printers for the types served here: Jobs and Pods as the built-in printers make them
 * (the wide columns have priority 1), the custom resource as the CRD handler makes them (Name and Age
 * when the CRD has no `additionalPrinterColumns`), anything else the default convertor's Name and
 * Created At. Pure: the API server calls it on list, get and watch replies.
 *
 * @module
 */

import type { ResourceDef } from './kinds/types.ts';
import type { KObject } from './store.ts';

type Any = any;

export interface TableRequest {
  /** The Table's group version: `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`. */
  apiVersion: string;
  /** `includeObject`: None, Metadata (the default) or Object. */
  includeObject: 'None' | 'Metadata' | 'Object';
}

/**
 * The Table a request asks for, from its Accept header (the first acceptable media type wins, as
 * the apiserver negotiates), or undefined for plain JSON.
 */
export function tableRequest(accept: string | undefined, includeObject: string | null): TableRequest | undefined {
  for (const part of (accept ?? '').split(',')) {
    const [type, ...params] = part.split(';').map((s) => s.trim());
    const p = Object.fromEntries(params.map((kv) => kv.split('=').map((s) => s.trim()) as [string, string]));
    if (type === 'application/json' && p.as === 'Table' && p.g === 'meta.k8s.io' && (p.v === 'v1' || p.v === 'v1beta1')) {
      const inc = includeObject === 'None' || includeObject === 'Object' ? includeObject : 'Metadata';
      return { apiVersion: `meta.k8s.io/${p.v}`, includeObject: inc };
    }
    if (type === 'application/json' || type === '*/*' || type === 'application/*') return undefined;
  }
  return undefined;
}

/** `duration.HumanDuration` (apimachinery): how kubectl and the printers write ages. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(ms / 60_000);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(ms / 3_600_000);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    return dy === 0 ? `${Math.trunc(hours / 24 / 365)}y` : `${Math.trunc(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** `translateTimestampSince`: `<unknown>` without a time. */
function since(ts: string | undefined, now: number): string {
  if (!ts) return '<unknown>';
  return humanDuration(now - Date.parse(ts));
}

interface Column {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

const col = (name: string, type: string, description: string, priority = 0, format = ''): Column => ({ name, type, format, description, priority });

const NAME_DOC =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names';
const CREATED_DOC =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

const JOB_COLUMNS = [
  col('Name', 'string', NAME_DOC, 0, 'name'),
  col('Completions', 'string', 'The completion status of the job'),
  col('Duration', 'string', 'Time required to complete the job.'),
  col('Age', 'string', CREATED_DOC),
  col('Containers', 'string', 'Names of each container in the template.', 1),
  col('Images', 'string', 'Images referenced by each container in the template.', 1),
  col(
    'Selector',
    'string',
    'A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors',
    1,
  ),
];

const POD_COLUMNS = [
  col('Name', 'string', NAME_DOC, 0, 'name'),
  col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
  col('Status', 'string', 'The aggregate status of the containers in this pod.'),
  col('Restarts', 'integer', 'The number of times the containers in this pod have been restarted.'),
  col('Age', 'string', CREATED_DOC),
  col('IP', 'string', 'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.', 1),
  col(
    'Node',
    'string',
    'NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the scheduler simply schedules this pod onto that node, assuming that it fits resource requirements.',
    1,
  ),
  col(
    'Nominated Node',
    'string',
    'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot schedule right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.',
    1,
  ),
  col(
    'Readiness Gates',
    'string',
    'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
    1,
  ),
];

/** The CRD handler's columns when `additionalPrinterColumns` is empty: Name, then the default Age. */
const CUSTOM_COLUMNS = [col('Name', 'string', NAME_DOC, 0, 'name'), col('Age', 'date', 'Custom resource definition column (in JSONPath format): .metadata.creationTimestamp')];

/** The default convertor (types without a printer). */
const DEFAULT_COLUMNS = [col('Name', 'string', NAME_DOC, 0, 'name'), col('Created At', 'date', CREATED_DOC)];

/** `metav1.FormatLabelSelector`. */
function formatSelector(sel: Any): string {
  if (!sel) return '<none>';
  const parts: string[] = [];
  for (const [k, v] of Object.entries((sel.matchLabels ?? {}) as Record<string, string>)) parts.push(`${k}=${v}`);
  for (const e of (sel.matchExpressions ?? []) as Any[]) {
    const vals = [...(e.values ?? [])].sort().join(',');
    switch (e.operator) {
      case 'In':
        parts.push(`${e.key} in (${vals})`);
        break;
      case 'NotIn':
        parts.push(`${e.key} notin (${vals})`);
        break;
      case 'Exists':
        parts.push(e.key);
        break;
      case 'DoesNotExist':
        parts.push(`!${e.key}`);
        break;
    }
  }
  const s = parts.join(',');
  return s === '' ? '<none>' : s;
}

function jobCells(o: Any, now: number): unknown[] {
  const spec = o.spec ?? {};
  const status = o.status ?? {};
  const succeeded = status.succeeded ?? 0;
  let completions: string;
  if (spec.completions !== undefined && spec.completions !== null) completions = `${succeeded}/${spec.completions}`;
  else completions = (spec.parallelism ?? 0) > 1 ? `${succeeded}/1 of ${spec.parallelism}` : `${succeeded}/1`;
  let duration = '';
  if (status.startTime) {
    duration = status.completionTime ? humanDuration(Date.parse(status.completionTime) - Date.parse(status.startTime)) : humanDuration(now - Date.parse(status.startTime));
  }
  const containers = (spec.template?.spec?.containers ?? []) as Any[];
  return [
    o.metadata.name,
    completions,
    duration,
    since(o.metadata.creationTimestamp, now),
    containers.map((c) => c.name).join(','),
    containers.map((c) => c.image).join(','),
    formatSelector(spec.selector),
  ];
}

function podCells(o: Any, now: number): { cells: unknown[]; conditions?: unknown[] } {
  const status = o.status ?? {};
  const containers = (o.spec?.containers ?? []) as Any[];
  let reason: string = status.reason || status.phase || '';
  let conditions: unknown[] | undefined;
  if (status.phase === 'Succeeded') conditions = [{ type: 'Completed', status: 'True' }];
  if (status.phase === 'Failed') conditions = [{ type: 'Completed', status: 'True' }];
  let restarts = 0;
  let ready = 0;
  let initializing = false;
  const inits = (status.initContainerStatuses ?? []) as Any[];
  for (let i = 0; i < inits.length; i++) {
    const c = inits[i];
    restarts += c.restartCount ?? 0;
    const t = c.state?.terminated;
    if (t && t.exitCode === 0) continue;
    initializing = true;
    if (t) reason = t.reason ? `Init:${t.reason}` : t.signal ? `Init:Signal:${t.signal}` : `Init:ExitCode:${t.exitCode}`;
    else if (c.state?.waiting?.reason && c.state.waiting.reason !== 'PodInitializing') reason = `Init:${c.state.waiting.reason}`;
    else reason = `Init:${i}/${(o.spec?.initContainers ?? []).length}`;
    break;
  }
  if (!initializing) {
    restarts = 0;
    let hasRunning = false;
    const cs = (status.containerStatuses ?? []) as Any[];
    for (let i = cs.length - 1; i >= 0; i--) {
      const c = cs[i];
      restarts += c.restartCount ?? 0;
      const st = c.state ?? {};
      if (st.waiting?.reason) reason = st.waiting.reason;
      else if (st.terminated?.reason) reason = st.terminated.reason;
      else if (st.terminated) reason = st.terminated.signal ? `Signal:${st.terminated.signal}` : `ExitCode:${st.terminated.exitCode}`;
      else if (c.ready && st.running) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) reason = 'Running';
  }
  if (o.metadata.deletionTimestamp && status.reason === 'NodeLost') reason = 'Unknown';
  else if (o.metadata.deletionTimestamp) reason = 'Terminating';
  const ip = (status.podIPs ?? [])[0]?.ip ?? '';
  const gates = (o.spec?.readinessGates ?? []) as Any[];
  let readiness = '<none>';
  if (gates.length) {
    const trueConds = new Set(((status.conditions ?? []) as Any[]).filter((c) => c.status === 'True').map((c) => c.type));
    readiness = `${gates.filter((g) => trueConds.has(g.conditionType)).length}/${gates.length}`;
  }
  return {
    cells: [
      o.metadata.name,
      `${ready}/${containers.length}`,
      reason,
      restarts,
      since(o.metadata.creationTimestamp, now),
      ip || '<none>',
      o.spec?.nodeName || '<none>',
      status.nominatedNodeName || '<none>',
      readiness,
    ],
    conditions,
  };
}

function columnsFor(def: ResourceDef): Column[] {
  if (def.custom) return CUSTOM_COLUMNS;
  if (def.resource === 'jobs' && def.group === 'batch') return JOB_COLUMNS;
  if (def.resource === 'pods' && def.group === '') return POD_COLUMNS;
  return DEFAULT_COLUMNS;
}

function rowFor(def: ResourceDef, o: Any, req: TableRequest, now: number): Any {
  let cells: unknown[];
  let conditions: unknown[] | undefined;
  // The CRD handler writes a `date` column as an age; the default convertor writes RFC 3339.
  if (def.custom) cells = [o.metadata.name, o.metadata.creationTimestamp ? since(o.metadata.creationTimestamp, now) : '<invalid>'];
  else if (def.resource === 'jobs' && def.group === 'batch') cells = jobCells(o, now);
  else if (def.resource === 'pods' && def.group === '') ({ cells, conditions } = podCells(o, now));
  else cells = [o.metadata.name, o.metadata.creationTimestamp ?? null];
  const row: Any = { cells };
  if (conditions) row.conditions = conditions;
  if (req.includeObject === 'Object') {
    row.object = { ...o, kind: def.kind, apiVersion: def.group ? `${def.group}/${def.version}` : def.version };
  } else if (req.includeObject === 'Metadata') {
    row.object = { kind: 'PartialObjectMetadata', apiVersion: req.apiVersion, metadata: o.metadata };
  }
  return row;
}

/**
 * A list (`items`) or one object as a Table. `headers: false` leaves the column definitions out,
 * as the apiserver does for every watch event after the first.
 */
export function asTable(def: ResourceDef, body: KObject, req: TableRequest, o: { headers?: boolean; now?: number } = {}): Any {
  const now = o.now ?? Date.now();
  const list = Array.isArray((body as Any).items);
  const items: Any[] = list ? (body as Any).items : [body];
  const metadata: Any = {};
  const src = list ? ((body as Any).metadata ?? {}) : {};
  metadata.resourceVersion = list ? src.resourceVersion : body.metadata.resourceVersion;
  if (src.continue) metadata.continue = src.continue;
  if (src.remainingItemCount !== undefined) metadata.remainingItemCount = src.remainingItemCount;
  return {
    kind: 'Table',
    apiVersion: req.apiVersion,
    metadata,
    columnDefinitions: o.headers === false ? null : columnsFor(def),
    rows: items.map((it) => rowFor(def, it, req, now)),
  };
}

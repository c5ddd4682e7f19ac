/**
 * batch/v1 Job: defaulting (`SetDefaults_Job`), the generated selector and template labels
 * (`generateSelector`, ≥1.27 prefixed labels included), and `ValidateJob`/`ValidateJobUpdate`.
 *
 * @module
 */

import { type FieldError, fieldErr, goValue } from '../errors.ts';
import { deepEqual } from '../patch.ts';
import type { KObject } from '../store.ts';
import { isDNS1123Label, nameIsDNSSubdomain, validateNonNegative, validateObjectMeta, validateObjectMetaUpdate } from '../validation.ts';
import { defaultPodSpec, validatePodTemplateSpec } from './pod-spec.ts';
import { BUILTIN_PATCH_TYPES, type ResourceDef } from './types.ts';

type Any = any;

export const LEGACY_JOB_NAME_LABEL = 'job-name';
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';

/** Marks (in memory only) a Job whose template labels were given, so its labels alias them. */
const aliasLabels = new WeakSet<object>();

function defaultJob(job: KObject): void {
  const spec = (job.spec ??= {});
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  spec.parallelism ??= 1;
  spec.backoffLimit ??= spec.backoffLimitPerIndex !== undefined ? 2147483647 : 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  spec.podReplacementPolicy ??= spec.podFailurePolicy ? 'Failed' : 'TerminatingOrFailed';
  const template = (spec.template ??= {});
  template.metadata ??= {};
  defaultPodSpec((template.spec ??= {}));
}

function generateSelector(job: KObject): void {
  const template = job.spec.template;
  const labels: Record<string, string> = (template.metadata.labels ??= {});
  const name = job.metadata.name ?? '';
  const uid = job.metadata.uid ?? '';
  for (const k of [LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL]) if (!(k in labels)) labels[k] = name;
  for (const k of [LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL]) if (!(k in labels)) labels[k] = uid;
  const selector = (job.spec.selector ??= {});
  selector.matchLabels ??= {};
  if (!(CONTROLLER_UID_LABEL in selector.matchLabels)) selector.matchLabels[CONTROLLER_UID_LABEL] = uid;
}

function selectorMatches(selector: Any, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector?.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector?.matchExpressions ?? []) {
    const has = e.key in l;
    if (e.operator === 'In' && !(has && (e.values ?? []).includes(l[e.key]))) return false;
    if (e.operator === 'NotIn' && has && (e.values ?? []).includes(l[e.key])) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

function goSelector(sel: Any): string {
  return `v1.LabelSelector{MatchLabels:${goValue(sel?.matchLabels ?? {})}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}`;
}

function goTemplate(t: Any): string {
  return `core.PodTemplateSpec{ObjectMeta:v1.ObjectMeta{Labels:${goValue(t?.metadata?.labels ?? {})}, Annotations:${goValue(t?.metadata?.annotations ?? {})}}, Spec:core.PodSpec{…}}`;
}

function validateGeneratedSelector(job: KObject): FieldError[] {
  const errs: FieldError[] = [];
  if (job.spec?.manualSelector === true || !job.spec?.selector) return errs;
  if (!job.metadata.uid) errs.push(fieldErr.required('metadata.uid'));
  const labels = job.spec.template?.metadata?.labels ?? {};
  const expect: [string, string][] = [
    [LEGACY_CONTROLLER_UID_LABEL, job.metadata.uid ?? ''],
    [LEGACY_JOB_NAME_LABEL, job.metadata.name ?? ''],
    [CONTROLLER_UID_LABEL, job.metadata.uid ?? ''],
    [JOB_NAME_LABEL, job.metadata.name ?? ''],
  ];
  for (const [k, v] of expect) {
    const field = `spec.template.metadata.labels[${k}]`;
    if (!(k in labels)) errs.push(fieldErr.required(field, v));
    else if (labels[k] !== v) errs.push(fieldErr.invalid(field, labels, `must be '${v}'`));
  }
  if (!selectorMatches(job.spec.selector, Object.fromEntries(expect))) {
    errs.push(fieldErr.invalidRaw('spec.selector', `&${goSelector(job.spec.selector)}`, '`selector` not auto-generated'));
  }
  return errs;
}

function validateJobSpec(spec: Any): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished']) {
    errs.push(...validateNonNegative(spec?.[f], `spec.${f}`));
  }
  if (spec?.completionMode !== undefined && spec.completionMode !== 'NonIndexed' && spec.completionMode !== 'Indexed') {
    errs.push(fieldErr.notSupported('spec.completionMode', spec.completionMode, ['NonIndexed', 'Indexed']));
  }
  if (spec?.podReplacementPolicy !== undefined && spec.podReplacementPolicy !== 'TerminatingOrFailed' && spec.podReplacementPolicy !== 'Failed') {
    errs.push(fieldErr.notSupported('spec.podReplacementPolicy', spec.podReplacementPolicy, ['Failed', 'TerminatingOrFailed']));
  }
  errs.push(...validatePodTemplateSpec(spec?.template, 'spec.template'));
  const rp = spec?.template?.spec?.restartPolicy;
  if (rp === 'Always' || !rp) {
    errs.push(fieldErr.required('spec.template.spec.restartPolicy', 'valid values: "OnFailure", "Never"'));
  } else if (rp !== 'OnFailure' && rp !== 'Never') {
    errs.push(fieldErr.notSupported('spec.template.spec.restartPolicy', rp, ['OnFailure', 'Never']));
  } else if (spec.podFailurePolicy && rp !== 'Never') {
    errs.push(fieldErr.invalid('spec.template.spec.restartPolicy', rp, 'only "Never" is supported when podFailurePolicy is specified'));
  }
  if (!spec?.selector) errs.push(fieldErr.required('spec.selector'));
  else if (!selectorMatches(spec.selector, spec.template?.metadata?.labels)) {
    errs.push(fieldErr.invalid('spec.template.metadata.labels', spec.template?.metadata?.labels ?? {}, '`selector` does not match template `labels`'));
  }
  return errs;
}

function stripSchedulingDirectives(t: Any): Any {
  const c = JSON.parse(JSON.stringify(t ?? {}));
  if (c.metadata) {
    delete c.metadata.labels;
    delete c.metadata.annotations;
  }
  if (c.spec) {
    delete c.spec.nodeSelector;
    delete c.spec.tolerations;
    delete c.spec.schedulingGates;
    if (c.spec.affinity) delete c.spec.affinity.nodeAffinity;
  }
  return c;
}

export const jobs: ResourceDef = {
  group: 'batch',
  version: 'v1',
  resource: 'jobs',
  kind: 'Job',
  listKind: 'JobList',
  categories: ['all'],
  custom: false,
  subresources: ['status'],
  patchTypes: BUILTIN_PATCH_TYPES,
  returnDeletedObject: false,
  allowUnconditionalUpdate: true,
  defaultGcPolicy: 'Orphan',
  nameValidator: nameIsDNSSubdomain,
  fieldLabels: (o) => ({
    'metadata.name': o.metadata.name ?? '',
    'metadata.namespace': o.metadata.namespace ?? '',
    'status.successful': String(o.status?.succeeded ?? 0),
  }),
  prepareForCreate(job) {
    // SetDefaults_Job aliases the Job's labels to the template's map when the Job has none and the
    // template has a labels map; the generated labels then appear on both (and are validated on both).
    if (Object.keys(job.metadata.labels ?? {}).length === 0 && job.spec?.template?.metadata?.labels) {
      aliasLabels.add(job);
    }
    defaultJob(job);
    job.status = {};
    job.metadata.generation = 1;
  },
  validate(job) {
    if (job.spec?.manualSelector !== true) generateSelector(job);
    if (aliasLabels.has(job)) job.metadata.labels = { ...job.spec.template.metadata.labels };
    const errs = validateObjectMeta(job.metadata, nameIsDNSSubdomain);
    errs.push(...validateGeneratedSelector(job));
    errs.push(...validateJobSpec(job.spec));
    return errs;
  },
  afterValidate(job) {
    // Read back from storage, a Job without labels is defaulted to its template's labels.
    if (Object.keys(job.metadata.labels ?? {}).length === 0) {
      job.metadata.labels = { ...(job.spec?.template?.metadata?.labels ?? {}) };
    }
  },
  warningsOnCreate(job) {
    const msgs = isDNS1123Label(job.metadata.name ?? '');
    return msgs.length ? [`metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [${msgs.join(' ')}]`] : [];
  },
  prepareForUpdate(job, old) {
    job.status = old.status;
    defaultJob(job);
    if (!deepEqual(job.spec, old.spec)) job.metadata.generation = (old.metadata.generation ?? 1) + 1;
    else job.metadata.generation = old.metadata.generation;
  },
  validateUpdate(job, old) {
    const errs = validateObjectMetaUpdate(job.metadata, old.metadata);
    errs.push(...validateJobSpec(job.spec));
    const immutable = (f: string, render: (v: Any) => string) => {
      if (!deepEqual(job.spec?.[f], old.spec?.[f])) errs.push(fieldErr.invalidRaw(`spec.${f}`, render(job.spec?.[f]), 'field is immutable'));
    };
    immutable('completions', (v) => goValue(v ?? null));
    immutable('selector', (v) => `&${goSelector(v)}`);
    const mutableDirectives = job.spec?.suspend === true && old.spec?.suspend === true && !old.status?.startTime;
    const a = mutableDirectives ? stripSchedulingDirectives(job.spec?.template) : job.spec?.template;
    const b = mutableDirectives ? stripSchedulingDirectives(old.spec?.template) : old.spec?.template;
    if (!deepEqual(a, b)) errs.push(fieldErr.invalidRaw('spec.template', goTemplate(job.spec?.template), 'field is immutable'));
    for (const f of ['completionMode', 'podFailurePolicy', 'backoffLimitPerIndex', 'managedBy', 'successPolicy']) {
      immutable(f, (v) => goValue(v ?? null));
    }
    return errs;
  },
  prepareForStatusUpdate(job, old) {
    const status = job.status;
    for (const k of Object.keys(job)) delete job[k];
    Object.assign(job, JSON.parse(JSON.stringify(old)));
    job.status = status ?? {};
  },
  validateStatusUpdate(job, old) {
    const errs = validateObjectMetaUpdate(job.metadata, old.metadata);
    for (const f of ['active', 'succeeded', 'failed']) errs.push(...validateNonNegative(job.status?.[f], `status.${f}`));
    return errs;
  },
};

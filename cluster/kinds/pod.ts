/**
 * core/v1 Pod and PersistentVolumeClaim strategies.
 *
 * @module
 */

import { type FieldError, fieldErr } from '../errors.ts';
import { clone, deepEqual } from '../patch.ts';
import type { KObject } from '../store.ts';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from '../validation.ts';
import { defaultPodOnly, defaultPodSpec, podQosClass, validatePodSpec } from './pod-spec.ts';
import { BUILTIN_PATCH_TYPES, type ResourceDef } from './types.ts';

type Any = any;

function keepAllButStatus(obj: KObject, old: KObject): void {
  const status = obj.status;
  for (const k of Object.keys(obj)) delete obj[k];
  Object.assign(obj, clone(old));
  obj.status = status ?? {};
}

/** Spec fields a Pod update may change; everything else is immutable (`ValidatePodUpdate`). */
function mutablePodSpecView(spec: Any): Any {
  const c = clone(spec ?? {});
  for (const ctr of c.containers ?? []) delete ctr.image;
  for (const ctr of c.initContainers ?? []) delete ctr.image;
  delete c.activeDeadlineSeconds;
  delete c.tolerations;
  delete c.terminationGracePeriodSeconds;
  return c;
}

const POD_UPDATE_FORBIDDEN =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

export const pods: ResourceDef = {
  group: '',
  version: 'v1',
  resource: 'pods',
  kind: 'Pod',
  listKind: 'PodList',
  shortNames: ['po'],
  categories: ['all'],
  custom: false,
  subresources: ['status', 'log', 'binding'],
  patchTypes: BUILTIN_PATCH_TYPES,
  returnDeletedObject: true,
  allowUnconditionalUpdate: true,
  defaultGcPolicy: 'Background',
  nameValidator: nameIsDNSSubdomain,
  fieldLabels: (o) => ({
    'metadata.name': o.metadata.name ?? '',
    'metadata.namespace': o.metadata.namespace ?? '',
    'spec.nodeName': o.spec?.nodeName ?? '',
    'spec.restartPolicy': o.spec?.restartPolicy ?? '',
    'spec.schedulerName': o.spec?.schedulerName ?? '',
    'spec.serviceAccountName': o.spec?.serviceAccountName ?? '',
    'spec.hostNetwork': String(o.spec?.hostNetwork ?? false),
    'status.phase': o.status?.phase ?? '',
    'status.podIP': o.status?.podIP ?? '',
    'status.nominatedNodeName': o.status?.nominatedNodeName ?? '',
  }),
  prepareForCreate(pod) {
    pod.spec ??= {};
    defaultPodSpec(pod.spec);
    defaultPodOnly(pod.spec);
    pod.status = { phase: 'Pending', qosClass: podQosClass(pod.spec) };
  },
  validate(pod) {
    return [...validateObjectMeta(pod.metadata, nameIsDNSSubdomain), ...validatePodSpec(pod.spec, 'spec')];
  },
  prepareForUpdate(pod, old) {
    pod.status = old.status;
  },
  validateUpdate(pod, old) {
    const errs: FieldError[] = validateObjectMetaUpdate(pod.metadata, old.metadata);
    if (!deepEqual(mutablePodSpecView(pod.spec), mutablePodSpecView(old.spec))) {
      errs.push(fieldErr.forbidden('spec', POD_UPDATE_FORBIDDEN));
    }
    return errs;
  },
  prepareForStatusUpdate: keepAllButStatus,
  validateStatusUpdate(pod, old) {
    const errs = validateObjectMetaUpdate(pod.metadata, old.metadata);
    const phases = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];
    if (pod.status?.phase !== undefined && !phases.includes(pod.status.phase)) {
      errs.push(fieldErr.notSupported('status.phase', pod.status.phase, phases));
    }
    const terminal = (p: unknown) => p === 'Succeeded' || p === 'Failed';
    if (terminal(old.status?.phase) && pod.status?.phase !== old.status?.phase) {
      errs.push(fieldErr.forbidden('status.phase', `cannot transition from ${old.status.phase} to ${pod.status?.phase}`));
    }
    return errs;
  },
  gracePeriod(pod, requested) {
    let period = requested ?? pod.spec?.terminationGracePeriodSeconds ?? 0;
    if (!pod.spec?.nodeName) period = 0;
    if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') period = 0;
    if (period < 0) period = 1;
    return period;
  },
};

const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];

export const persistentVolumeClaims: ResourceDef = {
  group: '',
  version: 'v1',
  resource: 'persistentvolumeclaims',
  kind: 'PersistentVolumeClaim',
  listKind: 'PersistentVolumeClaimList',
  shortNames: ['pvc'],
  custom: false,
  subresources: ['status'],
  patchTypes: BUILTIN_PATCH_TYPES,
  returnDeletedObject: true,
  allowUnconditionalUpdate: true,
  defaultGcPolicy: 'Background',
  nameValidator: nameIsDNSSubdomain,
  fieldLabels: (o) => ({ 'metadata.name': o.metadata.name ?? '', 'metadata.namespace': o.metadata.namespace ?? '' }),
  prepareForCreate(pvc) {
    pvc.spec ??= {};
    pvc.spec.volumeMode ??= 'Filesystem';
    pvc.status = { phase: 'Pending' };
    // The StorageObjectInUseProtection admission plugin.
    const f = (pvc.metadata.finalizers ??= []);
    if (!f.includes('kubernetes.io/pvc-protection')) f.push('kubernetes.io/pvc-protection');
  },
  validate(pvc) {
    const errs = validateObjectMeta(pvc.metadata, nameIsDNSSubdomain);
    const modes = pvc.spec?.accessModes;
    if (!Array.isArray(modes) || modes.length === 0) {
      errs.push(fieldErr.required('spec.accessModes', 'at least 1 access mode is required'));
    } else {
      for (const m of modes) if (!ACCESS_MODES.includes(m)) errs.push(fieldErr.notSupported('spec.accessModes', m, ACCESS_MODES));
    }
    if (!pvc.spec?.resources?.requests?.storage) errs.push(fieldErr.required('spec.resources[storage]'));
    return errs;
  },
  prepareForUpdate(pvc, old) {
    pvc.status = old.status;
  },
  validateUpdate(pvc, old) {
    const errs = validateObjectMetaUpdate(pvc.metadata, old.metadata);
    const view = (s: Any) => {
      const c = clone(s ?? {});
      if (c.resources) delete c.resources.requests;
      delete c.volumeAttributesClassName;
      if (old.spec?.volumeName === undefined) delete c.volumeName;
      return c;
    };
    if (!deepEqual(view(pvc.spec), view(old.spec))) {
      errs.push(fieldErr.forbidden('spec', 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims'));
    }
    return errs;
  },
  prepareForStatusUpdate: keepAllButStatus,
  validateStatusUpdate: (pvc, old) => validateObjectMetaUpdate(pvc.metadata, old.metadata),
};

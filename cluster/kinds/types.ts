/**
 * The shape of a served resource: identity (group, version, plural, Kind), the REST behaviour the
 * generic registry needs (patch types, delete reply, unconditional updates, GC default) and the
 * strategy hooks that kube-apiserver keeps per type (`rest.RESTCreateStrategy` and friends).
 *
 * @module
 */

import type { FieldError } from '../errors.ts';
import type { KObject } from '../store.ts';
import type { NameValidator } from '../validation.ts';

export const PATCH_JSON = 'application/json-patch+json';
export const PATCH_MERGE = 'application/merge-patch+json';
export const PATCH_STRATEGIC = 'application/strategic-merge-patch+json';
export const PATCH_APPLY_YAML = 'application/apply-patch+yaml';

/**
 * What built-in types accept. (≥1.32 adds `application/apply-patch+cbor` only behind the alpha
 * `CBORServingAndStorage` gate, off by default, so it is not listed.)
 */
export const BUILTIN_PATCH_TYPES = [PATCH_JSON, PATCH_MERGE, PATCH_STRATEGIC, PATCH_APPLY_YAML] as const;
/** What custom resources accept: no strategic merge. */
export const CUSTOM_PATCH_TYPES = [PATCH_JSON, PATCH_MERGE, PATCH_APPLY_YAML] as const;

export type GcPolicy = 'Orphan' | 'Background' | 'Foreground';

export interface ResourceDef {
  group: string;
  version: string;
  /** Plural, as in the URL. */
  resource: string;
  kind: string;
  listKind: string;
  /** Discovery's short names and categories (`kubectl get mc`, `kubectl get all`). */
  shortNames?: readonly string[];
  categories?: readonly string[];
  /** A custom resource: list items carry kind/apiVersion, no strategic merge, no unconditional update. */
  custom: boolean;
  /** Subresources served besides the main resource (`status`, `log`, `binding`). */
  subresources: readonly string[];
  patchTypes: readonly string[];
  /** Reply to an immediate DELETE: the object (true) or a `Status` Success (false). */
  returnDeletedObject: boolean;
  /** An update with an empty resourceVersion is applied unconditionally (true) or rejected (false). */
  allowUnconditionalUpdate: boolean;
  defaultGcPolicy: GcPolicy;
  nameValidator: NameValidator;
  /** Values for `fieldSelector`; unknown fields are a 400. */
  fieldLabels(obj: KObject): Record<string, string>;
  /** Clear status, apply defaults. Runs before uid/name generation. */
  prepareForCreate(obj: KObject): void;
  /** Validate a new object (may complete generated fields first, as Job's generateSelector does). */
  validate(obj: KObject): FieldError[];
  /** Defaults that depend on generated fields, applied after validation (Job labels). */
  afterValidate?(obj: KObject): void;
  warningsOnCreate?(obj: KObject): string[];
  /** Keep what a main-resource update may not change (status), bump generation. */
  prepareForUpdate(obj: KObject, old: KObject): void;
  validateUpdate(obj: KObject, old: KObject): FieldError[];
  /** For the status subresource: keep everything but status. */
  prepareForStatusUpdate(obj: KObject, old: KObject): void;
  validateStatusUpdate(obj: KObject, old: KObject): FieldError[];
  /** Grace period for a DELETE; 0 or undefined deletes at once. Pods only. */
  gracePeriod?(obj: KObject, requested: number | undefined): number;
}

export function apiVersionOf(def: ResourceDef): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

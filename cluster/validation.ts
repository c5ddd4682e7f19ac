/**
 * Name, label and annotation validation with the apimachinery messages
 * (`apimachinery/pkg/util/validation/validation.go`, `api/validation/objectmeta.go`), in their current
 * (one space after `,` in the examples) wording.
 *
 * @module
 */

import { type FieldError, fieldErr } from './errors.ts';

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`;
const QUALIFIED_NAME = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE = `(${QUALIFIED_NAME})?`;

const dns1123LabelRe = new RegExp(`^${DNS1123_LABEL}$`);
const dns1123SubdomainRe = new RegExp(`^${DNS1123_SUBDOMAIN}$`);
const qualifiedNameRe = new RegExp(`^${QUALIFIED_NAME}$`);
const labelValueRe = new RegExp(`^${LABEL_VALUE}$`);

export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}'`).join(', or ')}, regex used for validation is '${fmt}')`;
}

function maxLenError(n: number): string {
  return `must be no more than ${n} characters`;
}

export function isDNS1123Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!dns1123LabelRe.test(v)) {
    errs.push(
      regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", DNS1123_LABEL, 'my-name', '123-abc'),
    );
  }
  return errs;
}

export function isDNS1123Subdomain(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push(maxLenError(253));
  if (!dns1123SubdomainRe.test(v)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN,
        'example.com',
      ),
    );
  }
  return errs;
}

const QUALIFIED_NAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** `IsQualifiedName`: `[prefix/]name`, as used for label keys and annotation keys. */
export function isQualifiedName(v: string): string[] {
  const errs: string[] = [];
  const parts = v.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${m}`);
  } else {
    return [`a qualified name ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!qualifiedNameRe.test(name)) {
    errs.push(`name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME, 'MyName', 'my.name', '123-abc')}`);
  }
  return errs;
}

export function isValidLabelValue(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!labelValueRe.test(v)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errs;
}

function sortedEntries(m: Record<string, unknown> | undefined | null): [string, unknown][] {
  if (!m || typeof m !== 'object') return [];
  return Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `ValidateLabels`. Go iterates a map in random order; we use sorted keys. */
export function validateLabels(labels: Record<string, unknown> | undefined | null, field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of sortedEntries(labels)) {
    for (const m of isQualifiedName(k)) errs.push(fieldErr.invalid(field, k, m));
    if (typeof v !== 'string') {
      errs.push(fieldErr.invalid(field, v, 'must be a string'));
      continue;
    }
    for (const m of isValidLabelValue(v)) errs.push(fieldErr.invalid(field, v, m));
  }
  return errs;
}

/** `ValidateAnnotations`: qualified keys and a 256 KiB total of keys plus values. */
export function validateAnnotations(ann: Record<string, unknown> | undefined | null, field: string): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of sortedEntries(ann)) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(fieldErr.invalid(field, k, m));
    total += Buffer.byteLength(k) + Buffer.byteLength(typeof v === 'string' ? v : JSON.stringify(v ?? ''));
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(fieldErr.tooLong(field, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

/** Name validators take `(name, prefix)`; with `prefix` a trailing dash is masked (generateName). */
export type NameValidator = (name: string, prefix: boolean) => string[];

function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

export const nameIsDNSSubdomain: NameValidator = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: NameValidator = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);

export interface MetaLike {
  name?: string;
  generateName?: string;
  namespace?: string;
  labels?: Record<string, unknown> | null;
  annotations?: Record<string, unknown> | null;
  generation?: number;
  finalizers?: unknown;
  ownerReferences?: unknown;
}

/** `ValidateObjectMeta` (namespaced objects). */
export function validateObjectMeta(meta: MetaLike, nameFn: NameValidator, path = 'metadata'): FieldError[] {
  const errs: FieldError[] = [];
  if (meta.generateName) {
    for (const m of nameFn(meta.generateName, true)) errs.push(fieldErr.invalid(`${path}.generateName`, meta.generateName, m));
  }
  if (!meta.name) {
    errs.push(fieldErr.required(`${path}.name`, 'name or generateName is required'));
  } else {
    for (const m of nameFn(meta.name, false)) errs.push(fieldErr.invalid(`${path}.name`, meta.name, m));
  }
  if (!meta.namespace) errs.push(fieldErr.required(`${path}.namespace`));
  else for (const m of isDNS1123Label(meta.namespace)) errs.push(fieldErr.invalid(`${path}.namespace`, meta.namespace, m));
  if (typeof meta.generation === 'number' && meta.generation < 0) {
    errs.push(fieldErr.invalid(`${path}.generation`, meta.generation, 'must be greater than or equal to 0'));
  }
  errs.push(...validateLabels(meta.labels, `${path}.labels`));
  errs.push(...validateAnnotations(meta.annotations, `${path}.annotations`));
  if (meta.finalizers !== undefined && meta.finalizers !== null) {
    if (!Array.isArray(meta.finalizers)) errs.push(fieldErr.invalid(`${path}.finalizers`, String(meta.finalizers), 'must be a list'));
    else
      for (const f of meta.finalizers) {
        for (const m of isQualifiedName(String(f))) errs.push(fieldErr.invalid(`${path}.finalizers`, String(f), m));
      }
  }
  return errs;
}

/** `ValidateObjectMetaUpdate`: identity fields are immutable; labels and annotations re-validated. */
export function validateObjectMetaUpdate(meta: MetaLike & { uid?: string; creationTimestamp?: string }, old: MetaLike & { uid?: string; creationTimestamp?: string }, path = 'metadata'): FieldError[] {
  const errs: FieldError[] = [];
  const immutable = (f: 'name' | 'namespace' | 'uid' | 'creationTimestamp') => {
    if ((meta[f] ?? '') !== (old[f] ?? '')) errs.push(fieldErr.invalid(`${path}.${f}`, meta[f] ?? '', 'field is immutable'));
  };
  immutable('name');
  immutable('namespace');
  immutable('uid');
  immutable('creationTimestamp');
  errs.push(...validateLabels(meta.labels, `${path}.labels`));
  errs.push(...validateAnnotations(meta.annotations, `${path}.annotations`));
  return errs;
}

/** `ValidateNonnegativeField`. */
export function validateNonNegative(v: unknown, field: string): FieldError[] {
  if (typeof v === 'number' && v < 0) return [fieldErr.invalid(field, v, 'must be greater than or equal to 0')];
  return [];
}

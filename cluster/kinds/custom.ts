/**
 * Custom resources (the CRD strategy of apiextensions-apiserver), with a status subresource and the
 * `type` and `enum` checks of the CRD's structural schema (`knative/components/crd/crd.yaml`):
 * `felis.lolicon.best/v1alpha1` `minecraftservers`.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { type FieldError, fieldErr } from '../errors.ts';
import { clone, deepEqual } from '../patch.ts';
import type { KObject } from '../store.ts';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from '../validation.ts';
import { CUSTOM_PATCH_TYPES, type ResourceDef } from './types.ts';

/** The part of an OpenAPI v3 schema checked here. */
export interface SchemaProps {
  type?: string;
  enum?: unknown[];
  properties?: Record<string, SchemaProps>;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(want: string, got: string): boolean {
  return want === got || (want === 'number' && got === 'integer');
}

/**
 * The schema validator's type and enum errors (`apiextensions-apiserver`'s
 * `validation.ValidateCustomResource`): every type error first, then enum errors, each in path
 * order. `metadata`, `apiVersion` and `kind` are the generic validation's.
 */
export function validateAgainstSchema(obj: unknown, schema: SchemaProps | undefined): FieldError[] {
  const types: FieldError[] = [];
  const enums: FieldError[] = [];
  const walk = (v: unknown, s: SchemaProps, path: string) => {
    if (v === undefined) return;
    const got = jsonType(v);
    if (s.type && !typeMatches(s.type, got)) {
      types.push(fieldErr.invalid(path, got, `${path} in body must be of type ${s.type}: ${JSON.stringify(got)}`));
      return;
    }
    if (s.enum && !s.enum.some((e) => deepEqual(e as never, v as never))) {
      enums.push(
        fieldErr.notSupported(
          path,
          v,
          s.enum.map((e) => String(e)),
        ),
      );
    }
    if (s.properties && got === 'object') {
      for (const k of Object.keys(s.properties).sort()) walk((v as Record<string, unknown>)[k], s.properties[k]!, path ? `${path}.${k}` : k);
    }
  };
  if (schema?.properties && obj && typeof obj === 'object') {
    for (const k of Object.keys(schema.properties).sort()) {
      if (k === 'metadata' || k === 'apiVersion' || k === 'kind') continue;
      walk((obj as Record<string, unknown>)[k], schema.properties[k]!, k);
    }
  }
  return [...types, ...enums];
}

/** The served version's `openAPIV3Schema` of a CRD manifest, if the manifest has one. */
export function schemaFromCrd(path: string, group: string, plural: string, version: string): SchemaProps | undefined {
  for (const doc of loadAll(readFileSync(path, 'utf8')) as any[]) {
    if (doc?.kind !== 'CustomResourceDefinition' || doc.spec?.group !== group || doc.spec?.names?.plural !== plural) continue;
    return (doc.spec.versions as any[]).find((v) => v.name === version)?.schema?.openAPIV3Schema;
  }
  return undefined;
}

/** Everything except metadata and status: a change here bumps `metadata.generation`. */
function specView(o: KObject): unknown {
  const c = clone(o) as Record<string, unknown>;
  delete c.metadata;
  delete c.status;
  delete c.apiVersion;
  delete c.kind;
  return c;
}

export function customResource(opts: { group: string; version: string; resource: string; kind: string; shortNames?: string[]; schema?: SchemaProps }): ResourceDef {
  const { schema, ...id } = opts;
  return {
    ...id,
    listKind: `${opts.kind}List`,
    custom: true,
    subresources: ['status'],
    patchTypes: CUSTOM_PATCH_TYPES,
    returnDeletedObject: false,
    allowUnconditionalUpdate: false,
    defaultGcPolicy: 'Background',
    nameValidator: nameIsDNSSubdomain,
    fieldLabels: (o) => ({ 'metadata.name': o.metadata.name ?? '', 'metadata.namespace': o.metadata.namespace ?? '' }),
    prepareForCreate(o) {
      // With the status subresource enabled, status is reset on create.
      delete o.status;
      o.metadata.generation = 1;
    },
    validate: (o) => [...validateObjectMeta(o.metadata, nameIsDNSSubdomain), ...validateAgainstSchema(o, schema)],
    prepareForUpdate(o, old) {
      if (old.status === undefined) delete o.status;
      else o.status = clone(old.status);
      o.metadata.generation = deepEqual(specView(o), specView(old)) ? old.metadata.generation : (old.metadata.generation ?? 1) + 1;
    },
    validateUpdate: (o, old) => [...validateObjectMetaUpdate(o.metadata, old.metadata), ...validateAgainstSchema(o, schema)],
    prepareForStatusUpdate(o, old) {
      const status = o.status;
      for (const k of Object.keys(o)) delete o[k];
      Object.assign(o, clone(old));
      if (status === undefined) delete o.status;
      else o.status = status;
    },
    validateStatusUpdate: (o, old) => [...validateObjectMetaUpdate(o.metadata, old.metadata), ...validateAgainstSchema(o, schema)],
  };
}

export const minecraftServers = customResource({
  group: 'felis.lolicon.best',
  version: 'v1alpha1',
  resource: 'minecraftservers',
  kind: 'MinecraftServer',
  shortNames: ['mc'],
  schema: schemaFromCrd(join(import.meta.dirname, '..', '..', 'knative', 'components', 'crd', 'crd.yaml'), 'felis.lolicon.best', 'minecraftservers', 'v1alpha1'),
});

/**
 * Custom resources (the CRD strategy of apiextensions-apiserver), with a status subresource and no
 * schema: `felis.lolicon.best/v1alpha1` `minecraftservers`.
 *
 * @module
 */

import { clone, deepEqual } from '../patch.ts';
import type { KObject } from '../store.ts';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from '../validation.ts';
import { CUSTOM_PATCH_TYPES, type ResourceDef } from './types.ts';

/** Everything except metadata and status: a change here bumps `metadata.generation`. */
function specView(o: KObject): unknown {
  const c = clone(o) as Record<string, unknown>;
  delete c.metadata;
  delete c.status;
  delete c.apiVersion;
  delete c.kind;
  return c;
}

export function customResource(opts: { group: string; version: string; resource: string; kind: string }): ResourceDef {
  return {
    ...opts,
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
    validate: (o) => validateObjectMeta(o.metadata, nameIsDNSSubdomain),
    prepareForUpdate(o, old) {
      if (old.status === undefined) delete o.status;
      else o.status = clone(old.status);
      o.metadata.generation = deepEqual(specView(o), specView(old))
        ? old.metadata.generation
        : (old.metadata.generation ?? 1) + 1;
    },
    validateUpdate: (o, old) => validateObjectMetaUpdate(o.metadata, old.metadata),
    prepareForStatusUpdate(o, old) {
      const status = o.status;
      for (const k of Object.keys(o)) delete o[k];
      Object.assign(o, clone(old));
      if (status === undefined) delete o.status;
      else o.status = status;
    },
    validateStatusUpdate: (o, old) => validateObjectMetaUpdate(o.metadata, old.metadata),
  };
}

export const minecraftServers = customResource({
  group: 'felis.lolicon.best',
  version: 'v1alpha1',
  resource: 'minecraftservers',
  kind: 'MinecraftServer',
});

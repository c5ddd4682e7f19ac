/**
 * The generic registry (`apiserver/pkg/registry/generic/registry/store.go` and `rest/create.go`,
 * `rest/update.go`, `rest/delete.go`): create with name generation and validation, optimistic-lock
 * updates, graceful and finalizer-aware deletes, and paginated, filtered lists. The HTTP layer and
 * the in-process controllers both go through it, so every write is validated and versioned alike.
 *
 * @module
 */

import { randomBytes, randomUUID } from 'node:crypto';
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  failure,
  fieldErr,
  type GroupResource,
  generateNameConflict,
  invalid,
  namespaceNotFound,
  notFound,
  OPTIMISTIC_LOCK_ERROR_MSG,
} from './errors.ts';
import { apiVersionOf, type ResourceDef } from './kinds/types.ts';
import { clone, deepEqual } from './patch.ts';
import { parseFieldSelector, parseLabelSelector } from './selector.ts';
import type { KObject, Store } from './store.ts';

const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_GENERATED_NAME_LENGTH = 58;

/** `names.SimpleNameGenerator`: the base truncated to 58 characters plus 5 random ones. */
export function generateName(base: string): string {
  const b = base.length > MAX_GENERATED_NAME_LENGTH ? base.slice(0, MAX_GENERATED_NAME_LENGTH) : base;
  const bytes = randomBytes(5);
  let s = '';
  for (const x of bytes) s += NAME_ALPHABET[x % NAME_ALPHABET.length];
  return b + s;
}

/** RFC 3339 with whole seconds, as metav1.Time serialises. */
export function rfc3339(ms = Date.now()): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

export function groupResource(def: ResourceDef): GroupResource {
  return { group: def.group, resource: def.resource };
}

export interface WriteOptions {
  dryRun?: boolean;
  /** `fieldManager`, or the user-agent's first segment. */
  manager?: string;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

export interface DeleteOptions extends WriteOptions {
  propagationPolicy?: string;
  orphanDependents?: boolean;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface DeleteResult {
  /** The reply body: the object, or a `Status` Success. */
  body: KObject | Record<string, unknown>;
  /** The object is gone (not just marked for deletion). */
  deleted: boolean;
}

function continueToken(rv: string, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: Number(rv), start })).toString('base64url');
}

function decodeContinue(token: string): { rv: string; start: string } {
  try {
    const j = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (j.v !== 'meta.k8s.io/v1' || typeof j.start !== 'string' || typeof j.rv !== 'number') throw new Error('bad');
    return { rv: String(j.rv), start: j.start };
  } catch {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
}

export class Registry {
  readonly store: Store;
  private readonly defs: ResourceDef[];

  constructor(store: Store, defs: ResourceDef[]) {
    this.store = store;
    this.defs = defs;
  }

  /** The definition served at `group`/`resource`, if any. */
  find(group: string, version: string, resource: string): ResourceDef | undefined {
    return this.defs.find((d) => d.group === group && d.version === version && d.resource === resource);
  }

  byResource(resource: string): ResourceDef {
    const d = this.defs.find((x) => x.resource === resource);
    if (!d) throw new Error(`unknown resource ${resource}`);
    return d;
  }

  all(): readonly ResourceDef[] {
    return this.defs;
  }

  get(def: ResourceDef, ns: string, name: string): KObject {
    const o = this.store.get(def.resource, ns, name);
    if (!o) throw notFound(groupResource(def), name);
    return o;
  }

  private touchManagedFields(obj: KObject, def: ResourceDef, opts: WriteOptions, operation: string, subresource?: string): void {
    const manager = opts.manager || 'unknown';
    const entries = (Array.isArray(obj.metadata.managedFields) ? obj.metadata.managedFields : []) as Record<string, unknown>[];
    const entry: Record<string, unknown> = {
      manager,
      operation,
      apiVersion: apiVersionOf(def),
      time: rfc3339(),
      fieldsType: 'FieldsV1',
      fieldsV1: {},
    };
    if (subresource) entry.subresource = subresource;
    const i = entries.findIndex((e) => e.manager === manager && e.operation === operation && e.subresource === subresource);
    if (i >= 0) entries[i] = entry;
    else entries.push(entry);
    obj.metadata.managedFields = entries;
  }

  /** Create: admission (namespace), defaulting, name generation, validation, uniqueness. */
  create(def: ResourceDef, ns: string, body: KObject, opts: WriteOptions = {}): { obj: KObject; warnings: string[] } {
    if (!this.store.namespaces.has(ns)) throw namespaceNotFound(ns);
    const obj = clone(body);
    obj.metadata = obj.metadata && typeof obj.metadata === 'object' ? obj.metadata : {};
    if (obj.metadata.namespace && obj.metadata.namespace !== ns) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    if (obj.metadata.resourceVersion) {
      throw new ApiError(
        failure(500, 'InternalError', 'Internal error occurred: resourceVersion should not be set on objects to be created', {
          causes: [{ message: 'resourceVersion should not be set on objects to be created' }],
        }),
      );
    }
    obj.apiVersion = apiVersionOf(def);
    obj.kind = def.kind;
    obj.metadata.namespace = ns;
    delete obj.metadata.deletionTimestamp;
    delete obj.metadata.deletionGracePeriodSeconds;
    delete obj.metadata.managedFields;
    def.prepareForCreate(obj);
    obj.metadata.uid = randomUUID();
    obj.metadata.creationTimestamp = rfc3339();
    const generated = !obj.metadata.name && !!obj.metadata.generateName;
    if (generated) {
      let name = generateName(obj.metadata.generateName!);
      for (let i = 0; i < 8 && this.store.has(def.resource, ns, name); i++) name = generateName(obj.metadata.generateName!);
      obj.metadata.name = name;
    }
    const errs = def.validate(obj);
    if (errs.length) throw invalid({ group: def.group, kind: def.kind }, obj.metadata.name ?? '', errs);
    def.afterValidate?.(obj);
    const warnings = def.warningsOnCreate?.(obj) ?? [];
    const name = obj.metadata.name!;
    if (this.store.has(def.resource, ns, name)) {
      throw generated ? generateNameConflict(groupResource(def), name) : alreadyExists(groupResource(def), name);
    }
    this.touchManagedFields(obj, def, opts, 'Update');
    if (opts.dryRun) return { obj, warnings };
    return { obj: this.store.create(def.resource, obj), warnings };
  }

  /**
   * Update (`GuaranteedUpdate` + `BeforeUpdate`): `updated` gets a copy of the current object and
   * returns the new one. A resourceVersion in the result is a precondition.
   */
  update(def: ResourceDef, ns: string, name: string, updated: (current: KObject) => KObject, opts: WriteOptions & { subresource?: 'status'; operation?: string } = {}): KObject {
    const cur = this.get(def, ns, name);
    const next = updated(clone(cur));
    next.metadata ??= {};
    const rv = next.metadata.resourceVersion;
    if (rv === undefined || rv === null || rv === '' || rv === '0') {
      if (!def.allowUnconditionalUpdate) {
        throw invalid({ group: def.group, kind: def.resource }, name, [fieldErr.invalidRaw('metadata.resourceVersion', '0x0', 'must be specified for an update')]);
      }
    } else if (typeof rv !== 'string' || !/^\d+$/.test(rv)) {
      throw new ApiError(failure(500, undefined, `strconv.ParseUint: parsing ${JSON.stringify(String(rv))}: invalid syntax`));
    } else if (rv !== cur.metadata.resourceVersion) {
      throw conflict(groupResource(def), name, OPTIMISTIC_LOCK_ERROR_MSG);
    }
    next.metadata.resourceVersion = cur.metadata.resourceVersion;
    next.apiVersion = cur.apiVersion;
    next.kind = cur.kind;
    next.metadata.generation = cur.metadata.generation;
    if (next.metadata.generation === undefined) delete next.metadata.generation;
    if (opts.subresource === 'status') def.prepareForStatusUpdate(next, cur);
    else def.prepareForUpdate(next, cur);
    if (!next.metadata.uid) next.metadata.uid = cur.metadata.uid;
    next.metadata.creationTimestamp = cur.metadata.creationTimestamp;
    if (cur.metadata.deletionTimestamp) {
      next.metadata.deletionTimestamp = cur.metadata.deletionTimestamp;
      next.metadata.deletionGracePeriodSeconds = cur.metadata.deletionGracePeriodSeconds;
    } else {
      delete next.metadata.deletionTimestamp;
      delete next.metadata.deletionGracePeriodSeconds;
    }
    const errs = opts.subresource === 'status' ? def.validateStatusUpdate(next, cur) : def.validateUpdate(next, cur);
    if (errs.length) throw invalid({ group: def.group, kind: def.kind }, name, errs);
    if (deepEqual(next, cur)) return cur;
    this.touchManagedFields(next, def, opts, opts.operation ?? 'Update', opts.subresource);
    if (opts.dryRun) return next;
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0 && cur.metadata.deletionGracePeriodSeconds === 0) {
      return this.store.delete(def.resource, ns, name) ?? next;
    }
    return this.store.update(def.resource, next);
  }

  /**
   * A controller dropping one finalizer from the object it saw (not from a successor with the same
   * name). A vanished object counts as done.
   */
  removeFinalizer(resource: string, obj: KObject, finalizer: string, manager: string): void {
    if (!(obj.metadata.finalizers ?? []).includes(finalizer)) return;
    try {
      this.update(
        this.byResource(resource),
        obj.metadata.namespace!,
        obj.metadata.name!,
        (cur) => {
          if (cur.metadata.uid !== obj.metadata.uid) return cur;
          cur.metadata.finalizers = (cur.metadata.finalizers ?? []).filter((f) => f !== finalizer);
          if (cur.metadata.finalizers.length === 0) delete cur.metadata.finalizers;
          return cur;
        },
        { manager },
      );
    } catch (err) {
      if ((err as { code?: number }).code !== 404) throw err;
    }
  }

  /** Delete, honouring preconditions, graceful deletion (pods) and GC finalizers. */
  delete(def: ResourceDef, ns: string, name: string, opts: DeleteOptions = {}): DeleteResult {
    const cur = this.get(def, ns, name);
    const gr = groupResource(def);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== cur.metadata.uid) {
      throw conflict(gr, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${cur.metadata.uid}`);
    }
    if (pre?.resourceVersion && pre.resourceVersion !== cur.metadata.resourceVersion) {
      throw conflict(gr, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cur.metadata.resourceVersion}`);
    }
    // A Success Status has no code (Go's omitempty drops the 0).
    const success = (): Record<string, unknown> => ({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name, ...(def.group ? { group: def.group } : {}), kind: def.resource, uid: cur.metadata.uid },
    });
    const remove = (): DeleteResult => {
      if (opts.dryRun) return { body: def.returnDeletedObject ? cur : success(), deleted: true };
      const gone = this.store.delete(def.resource, ns, name) ?? cur;
      return { body: def.returnDeletedObject ? gone : success(), deleted: true };
    };

    const finalizers = [...(cur.metadata.finalizers ?? [])];
    const policy = opts.propagationPolicy ?? (opts.orphanDependents === true ? 'Orphan' : opts.orphanDependents === false ? 'Background' : def.defaultGcPolicy);
    const withFinalizer = (f: string) => {
      if (!finalizers.includes(f)) finalizers.push(f);
    };
    const withoutFinalizer = (f: string) => {
      const i = finalizers.indexOf(f);
      if (i >= 0) finalizers.splice(i, 1);
    };
    if (policy === 'Orphan') {
      withFinalizer('orphan');
      withoutFinalizer('foregroundDeletion');
    } else if (policy === 'Foreground') {
      withFinalizer('foregroundDeletion');
      withoutFinalizer('orphan');
    } else {
      withoutFinalizer('orphan');
    }

    if (cur.metadata.deletionTimestamp) {
      // Already being deleted: only a shorter grace period (e.g. the kubelet's final 0) changes anything.
      const grace = def.gracePeriod ? def.gracePeriod(cur, opts.gracePeriodSeconds ?? cur.metadata.deletionGracePeriodSeconds) : 0;
      const had = cur.metadata.deletionGracePeriodSeconds ?? 0;
      if (grace === 0 && (cur.metadata.finalizers ?? []).length === 0) return remove();
      if (grace < had && !opts.dryRun) {
        const upd = clone(cur);
        upd.metadata.deletionGracePeriodSeconds = grace;
        upd.metadata.deletionTimestamp = rfc3339(Date.now() + grace * 1000);
        return { body: this.store.update(def.resource, upd), deleted: false };
      }
      return { body: cur, deleted: false };
    }

    const grace = def.gracePeriod ? def.gracePeriod(cur, opts.gracePeriodSeconds) : 0;
    const pendingFinalizers = finalizers.length > 0;
    if (grace > 0 || pendingFinalizers) {
      const upd = clone(cur);
      upd.metadata.deletionTimestamp = rfc3339(Date.now() + grace * 1000);
      upd.metadata.deletionGracePeriodSeconds = grace;
      if (finalizers.length) upd.metadata.finalizers = finalizers;
      if (opts.dryRun) return { body: upd, deleted: false };
      return { body: this.store.update(def.resource, upd), deleted: false };
    }
    return remove();
  }

  /** List with label/field selectors and `limit`/`continue` pagination (etcd key order). */
  list(def: ResourceDef, ns: string | undefined, opts: ListOptions = {}): KObject {
    const matches = this.matcher(def, opts);
    let rv = this.store.resourceVersion();
    let start = '';
    if (opts.continue) {
      const c = decodeContinue(opts.continue);
      rv = c.rv;
      start = c.start;
    }
    const keyOf = (o: KObject) => (ns === undefined ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata.name ?? ''));
    let items = this.store.select(def.resource, ns, matches);
    if (start) items = items.filter((o) => keyOf(o) >= start);
    const metadata: Record<string, unknown> = { resourceVersion: rv };
    const limit = opts.limit && opts.limit > 0 ? opts.limit : undefined;
    if (limit !== undefined && items.length > limit) {
      const remaining = items.length - limit;
      items = items.slice(0, limit);
      metadata.continue = continueToken(rv, `${keyOf(items[items.length - 1]!)}\u0000`);
      if (!opts.labelSelector && !opts.fieldSelector) metadata.remainingItemCount = remaining;
    }
    if (!def.custom) {
      for (const o of items) {
        delete o.kind;
        delete o.apiVersion;
      }
    }
    return { kind: def.listKind, apiVersion: apiVersionOf(def), metadata, items } as unknown as KObject;
  }

  /** The label and field selectors of a list or watch as a predicate (a bad selector is a 400). */
  matcher(def: ResourceDef, opts: { labelSelector?: string; fieldSelector?: string }): (o: Readonly<KObject>) => boolean {
    let labelSel;
    try {
      labelSel = opts.labelSelector ? parseLabelSelector(opts.labelSelector) : undefined;
    } catch (e) {
      throw badRequest((e as Error).message);
    }
    let fieldTerms;
    try {
      fieldTerms = opts.fieldSelector ? parseFieldSelector(opts.fieldSelector) : [];
    } catch (e) {
      throw badRequest((e as Error).message);
    }
    if (fieldTerms.length) {
      const known = Object.keys(def.fieldLabels({ metadata: {} }));
      for (const t of fieldTerms) {
        if (!known.includes(t.field)) {
          throw badRequest(def.custom ? `"${t.field}" is not a known field selector: only "metadata.name", "metadata.namespace"` : `field label not supported: ${t.field}`);
        }
      }
    }
    return (o) => {
      if (labelSel && !labelSel.matches(o.metadata.labels)) return false;
      if (fieldTerms.length) {
        const f = def.fieldLabels(o as KObject);
        for (const t of fieldTerms) if ((f[t.field] === t.value) === t.not) return false;
      }
      return true;
    };
  }
}

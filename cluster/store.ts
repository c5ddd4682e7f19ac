/**
 * The in-memory object store (the emulation's etcd): objects by resource, namespace and name, one
 * global integer resourceVersion that increases on every write, and synchronous change events for
 * the controllers. Objects go in and come out as deep copies. With a `StoreBackend` (see
 * `persist.ts`) every write is committed to disk before it becomes visible, and the store starts
 * from what the backend holds.
 *
 * @module
 */

import { clone } from './patch.ts';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
  [k: string]: unknown;
}

/** A stored object. Fields other than metadata are loosely typed on purpose. */
export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: any;
  status?: any;
  [k: string]: unknown;
}

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: EventType;
  resource: string;
  object: KObject;
  /** For MODIFIED: the object before the write. */
  old?: KObject;
}

export type StoreListener = (e: StoreEvent) => void;

function key(ns: string, name: string): string {
  return `${ns}/${name}`;
}

/** Durable storage behind a Store: each call is one committed transaction unless inside `atomically`. */
export interface StoreBackend {
  /** What was committed before, or undefined for a new store. */
  load(): { resourceVersion: number; objects: { resource: string; object: KObject }[] } | undefined;
  put(resource: string, obj: KObject, resourceVersion: number): void;
  remove(resource: string, ns: string, name: string, resourceVersion: number): void;
  /** Runs `fn` so that its writes commit together (a crash keeps none or all of them). */
  atomically<T>(fn: () => T): T;
}

export class Store {
  private rv = 0;
  private readonly data = new Map<string, Map<string, KObject>>();
  private readonly listeners = new Set<StoreListener>();
  private readonly backend?: StoreBackend;
  readonly namespaces: Set<string>;

  constructor(namespaces: string[], backend?: StoreBackend) {
    // Start well above zero, as a real cluster would, so "0" and "" stay special.
    this.rv = 1000;
    this.namespaces = new Set(namespaces);
    this.backend = backend;
    const saved = backend?.load();
    if (saved) {
      this.rv = Math.max(this.rv, saved.resourceVersion);
      for (const { resource, object } of saved.objects) {
        this.table(resource).set(key(object.metadata.namespace ?? '', object.metadata.name ?? ''), object);
      }
    }
  }

  /**
   * Runs `fn` so that the writes it makes commit together. A write that throws inside does not
   * undo the earlier ones (memory and disk stay equal); the point is that a crash cannot keep half.
   */
  atomically<T>(fn: () => T): T {
    return this.backend ? this.backend.atomically(fn) : fn();
  }

  /** The current global resourceVersion, as the decimal string lists report. */
  resourceVersion(): string {
    return String(this.rv);
  }

  private table(resource: string): Map<string, KObject> {
    let t = this.data.get(resource);
    if (!t) {
      t = new Map();
      this.data.set(resource, t);
    }
    return t;
  }

  subscribe(l: StoreListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  private emit(e: StoreEvent): void {
    for (const l of [...this.listeners]) {
      try {
        l(e);
      } catch {
        // A listener must not break a write.
      }
    }
  }

  get(resource: string, ns: string, name: string): KObject | undefined {
    const o = this.table(resource).get(key(ns, name));
    return o ? clone(o) : undefined;
  }

  has(resource: string, ns: string, name: string): boolean {
    return this.table(resource).has(key(ns, name));
  }

  /** Objects in etcd key order (namespace, then name). */
  list(resource: string, ns?: string): KObject[] {
    return this.select(resource, ns, () => true);
  }

  /**
   * `list` of the objects `pick` accepts, in the same order. `pick` sees the stored object (it must
   * not change it) so that only what is picked is copied: the controllers and label-selected lists
   * ask for a few objects out of many on every event, and copying them all made each event cost
   * the whole table.
   */
  select(resource: string, ns: string | undefined, pick: (o: Readonly<KObject>) => boolean): KObject[] {
    const out: KObject[] = [];
    for (const [k, o] of this.table(resource)) {
      if ((ns === undefined || k.startsWith(`${ns}/`)) && pick(o)) out.push(clone(o));
    }
    return out.sort((a, b) => {
      const ka = key(a.metadata.namespace ?? '', a.metadata.name ?? '');
      const kb = key(b.metadata.namespace ?? '', b.metadata.name ?? '');
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    });
  }

  /** Resources that currently hold any object. */
  resources(): string[] {
    return [...this.data.keys()];
  }

  /** Inserts a new object; the caller has checked it does not exist. */
  create(resource: string, obj: KObject): KObject {
    const o = clone(obj);
    const rv = this.rv + 1;
    o.metadata.resourceVersion = String(rv);
    // Disk first: a write that cannot be committed is never seen.
    this.backend?.put(resource, o, rv);
    this.rv = rv;
    this.table(resource).set(key(o.metadata.namespace ?? '', o.metadata.name ?? ''), o);
    const out = clone(o);
    this.emit({ type: 'ADDED', resource, object: clone(o) });
    return out;
  }

  /** Replaces an existing object with a new resourceVersion. */
  update(resource: string, obj: KObject): KObject {
    const k = key(obj.metadata.namespace ?? '', obj.metadata.name ?? '');
    const old = this.table(resource).get(k);
    const o = clone(obj);
    const rv = this.rv + 1;
    o.metadata.resourceVersion = String(rv);
    this.backend?.put(resource, o, rv);
    this.rv = rv;
    this.table(resource).set(k, o);
    const out = clone(o);
    this.emit({ type: 'MODIFIED', resource, object: clone(o), old: old ? clone(old) : undefined });
    return out;
  }

  /** Removes an object; the DELETED event carries a fresh resourceVersion, as etcd's does. */
  delete(resource: string, ns: string, name: string): KObject | undefined {
    const k = key(ns, name);
    const o = this.table(resource).get(k);
    if (!o) return undefined;
    const rv = this.rv + 1;
    this.backend?.remove(resource, ns, name, rv);
    this.rv = rv;
    this.table(resource).delete(k);
    o.metadata.resourceVersion = String(rv);
    const out = clone(o);
    this.emit({ type: 'DELETED', resource, object: clone(o) });
    return out;
  }
}

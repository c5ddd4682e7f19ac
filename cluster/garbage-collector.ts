/**
 * The garbage collector (ownerReferences: `orphan`, `foregroundDeletion`, background deletion of
 * dependents) and the two small volume controllers a Pod's claim depends on: a binder that binds
 * every new claim at once (as a local provisioner would) and `kubernetes.io/pvc-protection`.
 *
 * @module
 */

import { WorkQueue } from './queue.ts';
import type { Registry } from './registry.ts';
import type { KObject, Store, StoreEvent } from './store.ts';

const PVC_PROTECTION = 'kubernetes.io/pvc-protection';
const TERMINAL = new Set(['Succeeded', 'Failed']);

type Log = { warn(...a: unknown[]): void };

export class GarbageCollector {
  private readonly registry: Registry;
  private readonly store: Store;
  private readonly queue: WorkQueue;
  private unsubscribe?: () => void;

  constructor(registry: Registry, logger: Log) {
    this.registry = registry;
    this.store = registry.store;
    this.queue = new WorkQueue(
      (k) => this.sync(k),
      (k, err) => logger.warn({ key: k, err: String(err) }, 'garbage collector retry'),
    );
  }

  start(): void {
    this.unsubscribe = this.store.subscribe((e) => this.onEvent(e));
    // Objects loaded from disk: finish what a previous run left half-done (deletions waiting on
    // finalizers, dependents whose owners are gone, claims to bind or release).
    for (const resource of this.store.resources()) {
      for (const obj of this.store.list(resource)) {
        const m = obj.metadata;
        const id = `${resource}|${m.namespace}|${m.name}|${m.uid}`;
        if (m.deletionTimestamp) this.queue.add(`finalize|${id}`);
        if (resource === 'persistentvolumeclaims') this.queue.add(m.deletionTimestamp ? `claim|${m.namespace}|${m.name}` : `bind|${id}`);
        for (const ref of m.ownerReferences ?? []) {
          if (!this.findByUid(m.namespace!, ref.uid)) this.queue.add(`deleted|${resource}|${m.namespace}||${ref.uid}`);
        }
      }
    }
  }

  stop(): void {
    this.unsubscribe?.();
    this.queue.stop();
  }

  private onEvent(e: StoreEvent): void {
    const m = e.object.metadata;
    const id = `${e.resource}|${m.namespace}|${m.name}|${m.uid}`;
    if (e.type === 'DELETED') {
      this.queue.add(`deleted|${id}`);
    } else if (m.deletionTimestamp) {
      this.queue.add(`finalize|${id}`);
    }
    if (e.resource === 'persistentvolumeclaims' && e.type === 'ADDED') this.queue.add(`bind|${id}`);
    // A dependent's change may unblock an owner waiting in foreground deletion, and a pod's change
    // may release a claim.
    for (const ref of m.ownerReferences ?? []) this.queue.add(`owner|${m.namespace}|${ref.uid}`);
    if (e.resource === 'pods') {
      for (const v of e.object.spec?.volumes ?? []) {
        if (v?.persistentVolumeClaim?.claimName) this.queue.add(`claim|${m.namespace}|${v.persistentVolumeClaim.claimName}`);
      }
    }
  }

  private dependents(ns: string, ownerUid: string): { resource: string; obj: KObject }[] {
    const out: { resource: string; obj: KObject }[] = [];
    for (const resource of this.store.resources()) {
      for (const obj of this.store.select(resource, ns, (o) => (o.metadata.ownerReferences ?? []).some((r) => r.uid === ownerUid))) {
        out.push({ resource, obj });
      }
    }
    return out;
  }

  private findByUid(ns: string, uid: string): { resource: string; obj: KObject } | undefined {
    for (const resource of this.store.resources()) {
      const [obj] = this.store.select(resource, ns, (o) => o.metadata.uid === uid);
      if (obj) return { resource, obj };
    }
    return undefined;
  }

  private removeFinalizer(resource: string, obj: KObject, finalizer: string): void {
    this.registry.removeFinalizer(resource, obj, finalizer, 'garbage-collector');
  }

  private deleteDependent(resource: string, obj: KObject, policy = 'Background'): void {
    const def = this.registry.byResource(resource);
    try {
      this.registry.delete(def, obj.metadata.namespace!, obj.metadata.name!, {
        propagationPolicy: policy,
        preconditions: { uid: obj.metadata.uid },
      });
    } catch (err) {
      if ((err as { code?: number }).code !== 404 && (err as { code?: number }).code !== 409) throw err;
    }
  }

  private sync(key: string): void {
    const [kind, ...rest] = key.split('|');
    if (kind === 'deleted') {
      const [, ns, , uid] = rest as [string, string, string, string];
      // Background: dependents whose owners are all gone are deleted.
      for (const d of this.dependents(ns, uid)) {
        if (d.obj.metadata.deletionTimestamp) continue;
        const alive = (d.obj.metadata.ownerReferences ?? []).some((r) => r.uid !== uid && this.findByUid(ns, r.uid));
        if (!alive) this.deleteDependent(d.resource, d.obj);
      }
      return;
    }
    if (kind === 'finalize' || kind === 'owner') {
      let resource: string;
      let obj: KObject | undefined;
      if (kind === 'finalize') {
        const [r, ns, name, uid] = rest as [string, string, string, string];
        resource = r;
        obj = this.store.get(r, ns, name);
        if (!obj || obj.metadata.uid !== uid) return;
      } else {
        const [ns, uid] = rest as [string, string];
        const found = this.findByUid(ns, uid);
        if (!found) return;
        resource = found.resource;
        obj = found.obj;
      }
      if (!obj.metadata.deletionTimestamp) return;
      const ns = obj.metadata.namespace!;
      const finalizers = obj.metadata.finalizers ?? [];
      if (finalizers.includes('orphan')) {
        for (const d of this.dependents(ns, obj.metadata.uid!)) {
          const def = this.registry.byResource(d.resource);
          this.registry.update(
            def,
            ns,
            d.obj.metadata.name!,
            (cur) => {
              cur.metadata.ownerReferences = (cur.metadata.ownerReferences ?? []).filter((r) => r.uid !== obj!.metadata.uid);
              if (cur.metadata.ownerReferences.length === 0) delete cur.metadata.ownerReferences;
              return cur;
            },
            { manager: 'garbage-collector' },
          );
        }
        this.removeFinalizer(resource, obj, 'orphan');
      } else if (finalizers.includes('foregroundDeletion')) {
        const deps = this.dependents(ns, obj.metadata.uid!);
        for (const d of deps) if (!d.obj.metadata.deletionTimestamp) this.deleteDependent(d.resource, d.obj);
        if (deps.length === 0) this.removeFinalizer(resource, obj, 'foregroundDeletion');
      }
      if (resource === 'persistentvolumeclaims') this.queue.add(`claim|${ns}|${obj.metadata.name}`);
      return;
    }
    if (kind === 'bind') {
      const [, ns, name, uid] = rest as [string, string, string, string];
      const def = this.registry.byResource('persistentvolumeclaims');
      const pvc = this.store.get('persistentvolumeclaims', ns, name);
      if (!pvc || pvc.metadata.uid !== uid || pvc.spec?.volumeName) return;
      const bound = this.registry.update(
        def,
        ns,
        name,
        (cur) => {
          cur.spec.volumeName = `pvc-${cur.metadata.uid}`;
          return cur;
        },
        { manager: 'kube-controller-manager' },
      );
      this.registry.update(
        def,
        ns,
        name,
        (cur) => {
          cur.status = {
            phase: 'Bound',
            accessModes: bound.spec?.accessModes ?? [],
            capacity: { storage: bound.spec?.resources?.requests?.storage },
          };
          return cur;
        },
        { subresource: 'status', manager: 'kube-controller-manager' },
      );
      return;
    }
    if (kind === 'claim') {
      const [ns, name] = rest as [string, string];
      const pvc = this.store.get('persistentvolumeclaims', ns, name);
      if (!pvc?.metadata.deletionTimestamp || !(pvc.metadata.finalizers ?? []).includes(PVC_PROTECTION)) return;
      const inUse = this.store
        .list('pods', ns)
        .some((p) => !TERMINAL.has(p.status?.phase) && (p.spec?.volumes ?? []).some((v: { persistentVolumeClaim?: { claimName?: string } }) => v?.persistentVolumeClaim?.claimName === name));
      if (!inUse) this.removeFinalizer('persistentvolumeclaims', pvc, PVC_PROTECTION);
    }
  }
}

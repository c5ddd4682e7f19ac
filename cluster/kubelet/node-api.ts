/**
 * The narrow interface between the local kubelet and an API server. The emulation implements it
 * in-process over the registry; a later adapter can implement it against a real kube-apiserver
 * (list/watch Pods by `spec.nodeName`, `POST pods/{name}/binding`, `PATCH pods/{name}/status`,
 * `DELETE` with `gracePeriodSeconds=0`).
 *
 * @module
 */

import type { Registry } from '../registry.ts';
import { rfc3339 } from '../registry.ts';
import type { KObject } from '../store.ts';

export interface NodeApi {
  readonly nodeName: string;
  /**
   * Pods bound to this node, plus unscheduled ones (this node also plays the scheduler). `wanted`,
   * when given, says which of them the kubelet needs: an implementation may leave the others out
   * (the in-process one then does not copy them), or return them anyway.
   */
  podsToRun(wanted?: (pod: Readonly<KObject>) => boolean): Promise<KObject[]>;
  /** Calls `cb` whenever Pods or claims may have changed. Returns an unsubscribe function. */
  onChange(cb: () => void): () => void;
  /** The claim exists and is not being deleted (else the Pod cannot be scheduled). */
  claimExists(namespace: string, claim: string): Promise<boolean>;
  /** Binds the Pod to this node (`spec.nodeName`, condition PodScheduled). */
  bind(namespace: string, name: string, uid: string): Promise<void>;
  /** Replaces the Pod's status (the kubelet's status manager). */
  setPodStatus(namespace: string, name: string, uid: string, status: unknown): Promise<void>;
  /** After a deleted Pod's containers have stopped: the final delete with grace period 0. */
  finishDeletion(namespace: string, name: string, uid: string): Promise<void>;
}

function ignoreGone(err: unknown): void {
  const code = (err as { code?: number }).code;
  if (code !== 404 && code !== 409) throw err;
}

/** `NodeApi` over the emulation's own registry. */
export class InProcessNodeApi implements NodeApi {
  readonly nodeName: string;
  private readonly registry: Registry;

  constructor(registry: Registry, nodeName: string) {
    this.registry = registry;
    this.nodeName = nodeName;
  }

  async podsToRun(wanted?: (pod: Readonly<KObject>) => boolean): Promise<KObject[]> {
    return this.registry.store.select('pods', undefined, (p) => (!p.spec?.nodeName || p.spec.nodeName === this.nodeName) && (!wanted || wanted(p)));
  }

  onChange(cb: () => void): () => void {
    return this.registry.store.subscribe((e) => {
      if (e.resource === 'pods' || e.resource === 'persistentvolumeclaims') cb();
    });
  }

  async claimExists(namespace: string, claim: string): Promise<boolean> {
    const pvc = this.registry.store.get('persistentvolumeclaims', namespace, claim);
    return !!pvc && !pvc.metadata.deletionTimestamp;
  }

  async bind(namespace: string, name: string, uid: string): Promise<void> {
    // The binding subresource: its own guarded update of nodeName plus the PodScheduled condition.
    const store = this.registry.store;
    const pod = store.get('pods', namespace, name);
    if (!pod || pod.metadata.uid !== uid) throw Object.assign(new Error(`pod ${name} is gone`), { code: 404 });
    if (pod.metadata.deletionTimestamp) throw Object.assign(new Error(`pod ${name} is being deleted`), { code: 409 });
    if (pod.spec?.nodeName) throw Object.assign(new Error(`pod ${name} is already assigned to node "${pod.spec.nodeName}"`), { code: 409 });
    pod.spec.nodeName = this.nodeName;
    const conditions = (pod.status.conditions ??= []).filter((c: { type: string }) => c.type !== 'PodScheduled');
    conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339() });
    pod.status.conditions = conditions;
    store.update('pods', pod);
  }

  async setPodStatus(namespace: string, name: string, uid: string, status: unknown): Promise<void> {
    try {
      this.registry.update(
        this.registry.byResource('pods'),
        namespace,
        name,
        (cur) => {
          if (cur.metadata.uid !== uid) throw Object.assign(new Error('uid changed'), { code: 409 });
          cur.status = status;
          return cur;
        },
        { subresource: 'status', manager: 'kubelet' },
      );
    } catch (err) {
      ignoreGone(err);
    }
  }

  async finishDeletion(namespace: string, name: string, uid: string): Promise<void> {
    try {
      this.registry.delete(this.registry.byResource('pods'), namespace, name, { gracePeriodSeconds: 0, preconditions: { uid } });
    } catch (err) {
      ignoreGone(err);
    }
  }
}

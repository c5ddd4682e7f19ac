/**
 * `NodeApi` against a real kube-apiserver, with the admin token (the kubelet's identity, never the
 * functions'): list Pods, watch Pods and claims to know when to look again, bind a Pod with
 * `POST pods/{name}/binding` (there is no scheduler: this node schedules its own Pods), replace its
 * status with a JSON patch on `pods/{name}/status` (guarded by a `test` of the uid), and finish a
 * graceful deletion with a grace-0 delete preconditioned on the uid.
 *
 * @module
 */

import { request } from 'undici';
import type { AdminClient } from '../admin-client.ts';
import type { KObject } from '../store.ts';
import type { NodeApi } from './node-api.ts';

type Log = { info(...a: unknown[]): void; warn(...a: unknown[]): void };

class GoneError extends Error {
  readonly code: number;
  constructor(message: string, code: number) {
    super(message);
    this.code = code;
  }
}

export interface RealNodeApiOptions {
  nodeName: string;
  logger: Log;
  /** How often to look again even without a watch event (a safety net). Default 1000 ms. */
  resyncMs?: number;
}

export class RealNodeApi implements NodeApi {
  readonly nodeName: string;
  private readonly admin: AdminClient;
  private readonly logger: Log;
  private readonly resyncMs: number;

  constructor(admin: AdminClient, opts: RealNodeApiOptions) {
    this.admin = admin;
    this.nodeName = opts.nodeName;
    this.logger = opts.logger;
    this.resyncMs = opts.resyncMs ?? 1000;
  }

  async podsToRun(): Promise<KObject[]> {
    const r = await this.admin.must('GET', '/api/v1/pods');
    return (r.body.items as KObject[]).filter((p) => !p.spec?.nodeName || p.spec.nodeName === this.nodeName).map((p) => ({ apiVersion: 'v1', kind: 'Pod', ...p }));
  }

  onChange(cb: () => void): () => void {
    const ac = new AbortController();
    for (const path of ['/api/v1/pods', '/api/v1/persistentvolumeclaims']) void this.watchLoop(path, cb, ac.signal);
    const timer = setInterval(cb, this.resyncMs);
    timer.unref();
    return () => {
      clearInterval(timer);
      ac.abort();
    };
  }

  /** Watches `path` and calls `cb` per event, reconnecting until aborted. */
  private async watchLoop(path: string, cb: () => void, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const res = await request(`${this.admin.url}${path}?watch=true&timeoutSeconds=300`, {
          method: 'GET',
          headers: { authorization: `Bearer ${this.admin.token}`, accept: 'application/json' },
          dispatcher: this.admin.agent,
          signal,
        });
        if (res.statusCode !== 200) {
          const text = await res.body.text();
          throw new Error(`watch ${path}: HTTP ${res.statusCode} ${text.slice(0, 200)}`);
        }
        for await (const chunk of res.body) {
          if ((chunk as Buffer).includes(0x0a)) cb();
        }
      } catch (err) {
        if (signal.aborted) return;
        this.logger.warn({ err: String(err), path }, 'kubelet: watch failed; retrying');
      }
      if (signal.aborted) return;
      cb();
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async claimExists(namespace: string, claim: string): Promise<boolean> {
    const r = await this.admin.call('GET', `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${encodeURIComponent(claim)}`);
    if (r.status === 404) return false;
    if (r.status !== 200) throw new Error(`get claim ${claim}: HTTP ${r.status} ${r.text.slice(0, 200)}`);
    return !r.body.metadata?.deletionTimestamp;
  }

  async bind(namespace: string, name: string, uid: string): Promise<void> {
    const r = await this.admin.call('POST', `/api/v1/namespaces/${namespace}/pods/${encodeURIComponent(name)}/binding`, {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name, uid },
      target: { apiVersion: 'v1', kind: 'Node', name: this.nodeName },
    });
    if (r.status >= 200 && r.status < 300) return;
    if (r.status === 404 || r.status === 409) throw new GoneError(`bind ${name}: ${r.body?.message ?? r.status}`, r.status);
    throw new Error(`bind ${name}: HTTP ${r.status} ${r.body?.message ?? r.text.slice(0, 200)}`);
  }

  async setPodStatus(namespace: string, name: string, uid: string, status: unknown): Promise<void> {
    const r = await this.admin.call(
      'PATCH',
      `/api/v1/namespaces/${namespace}/pods/${encodeURIComponent(name)}/status`,
      [
        { op: 'test', path: '/metadata/uid', value: uid },
        { op: 'add', path: '/status', value: status },
      ],
      'application/json-patch+json',
    );
    if (r.status >= 200 && r.status < 300) return;
    // Gone, replaced by a Pod of the same name (the uid test fails with 422), or being deleted.
    if (r.status === 404 || r.status === 409 || r.status === 422) return;
    throw new Error(`status of ${name}: HTTP ${r.status} ${r.body?.message ?? r.text.slice(0, 200)}`);
  }

  async finishDeletion(namespace: string, name: string, uid: string): Promise<void> {
    const r = await this.admin.call('DELETE', `/api/v1/namespaces/${namespace}/pods/${encodeURIComponent(name)}`, {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      gracePeriodSeconds: 0,
      preconditions: { uid },
    });
    if ((r.status >= 200 && r.status < 300) || r.status === 404 || r.status === 409) return;
    throw new Error(`delete ${name}: HTTP ${r.status} ${r.body?.message ?? r.text.slice(0, 200)}`);
  }
}

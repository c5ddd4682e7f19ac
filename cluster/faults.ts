/**
 * Fault injection: fail the next N API requests that match, and per-pod kubelet behaviour chosen
 * by label selector (never schedule, never start, OOM-kill, slow schedule/start).
 *
 * @module
 */

import { ApiError, failure, reasonForCode } from './errors.ts';
import { type LabelSelector, parseLabelSelector } from './selector.ts';

export interface RequestFault {
  verb: string;
  /** `jobs`, `pods`, `pods/log`, `minecraftservers/status` … */
  resource: string;
  user?: string;
  code: number;
  reason?: string;
  message?: string;
  /** How many matching requests fail (default 1). */
  times?: number;
}

export interface PodBehaviour {
  /** The Pod stays unscheduled (no nodeName) until deleted. */
  neverSchedule?: boolean;
  /** The container stays `waiting: ContainerCreating` until deleted. */
  neverStart?: boolean;
  /** Kill the process this long after it starts: `terminated {exitCode: 137, reason: OOMKilled}`. */
  oomKillAfterMs?: number;
  /** Override the time spent unscheduled. */
  unscheduledMs?: number;
  /** Override the time spent in ContainerCreating. */
  creatingMs?: number;
}

export class Faults {
  private requests: (RequestFault & { left: number })[] = [];
  private pods: { selector: LabelSelector; behaviour: PodBehaviour }[] = [];
  private readonly listeners = new Set<() => void>();

  /** Called when pod behaviours change, so a waiting kubelet re-evaluates. */
  subscribe(l: () => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  failNext(m: RequestFault): void {
    this.requests.push({ ...m, left: m.times ?? 1 });
  }

  /** Applies a selector-matched behaviour to Pods the kubelet picks up from now on. */
  pod(selector: string, b: PodBehaviour): void {
    this.pods.push({ selector: parseLabelSelector(selector), behaviour: { ...b } });
    this.changed();
  }

  clear(): void {
    this.requests = [];
    this.pods = [];
    this.changed();
  }

  /** The injected error for this request, if one matches (consuming one use). */
  takeRequestFault(user: string, verb: string, resource: string): ApiError | undefined {
    const f = this.requests.find((r) => r.left > 0 && r.verb === verb && r.resource === resource && (!r.user || r.user === user));
    if (!f) return undefined;
    f.left--;
    this.requests = this.requests.filter((r) => r.left > 0);
    const reason = f.reason ?? reasonForCode(f.code);
    const message = f.message ?? (f.code === 401 ? 'Unauthorized' : `injected fault: ${verb} ${resource}`);
    const headers: Record<string, string> = f.code === 429 || f.code === 503 ? { 'Retry-After': '1' } : {};
    return new ApiError(failure(f.code, reason, message), headers);
  }

  /** The merged behaviour of every rule matching these labels (later rules win). */
  podBehaviour(labels: Record<string, string> | undefined): PodBehaviour {
    const out: PodBehaviour = {};
    for (const p of this.pods) if (p.selector.matches(labels)) Object.assign(out, p.behaviour);
    return out;
  }
}

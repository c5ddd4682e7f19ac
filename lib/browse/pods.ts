/**
 * Which browse Pods can serve a request, from a `pods list`: pure. A Pod serves a target when it
 * mounts the target's world claim, runs the configured image, is pinned to the same node, and is
 * running with an address, with enough of its lifetime left that a call will not meet its end.
 * The oldest serving Pod comes first, so instances that raced to start two converge on one, and
 * the other stops when idle.
 * @module
 */
import { createHash } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { callableAddress, controllerJob } from '../kube/job-facts.ts';
import { FILES_CONTAINER } from '../labels.ts';

export interface SessionWant {
  claim: string;
  node?: string;
  image: string;
  lifetimeSeconds: number;
}

export interface SessionPod {
  pod: string;
  job: string;
  ip: string;
  startedMs: number;
}

/** Time kept in hand before a Pod's own lifetime ends: no new call is sent to it past this. */
export const END_MARGIN_MS = 15_000;

function fits(pod: V1Pod, want: SessionWant): boolean {
  const spec = pod.spec;
  const claim = spec?.volumes?.find((v) => v.name === 'world')?.persistentVolumeClaim?.claimName;
  const c = spec?.containers?.find((x) => x.name === FILES_CONTAINER);
  const node = spec?.nodeSelector?.['felis.node-restriction.kubernetes.io/identity'];
  return claim === want.claim && c?.image === want.image && (node ?? '') === (want.node ?? '') && !pod.metadata?.deletionTimestamp;
}

function startedMs(pod: V1Pod): number {
  const s = pod.status?.startTime ?? pod.metadata?.creationTimestamp;
  return s ? new Date(s).getTime() : 0;
}

function lifeLeft(pod: V1Pod, want: SessionWant, nowMs: number): boolean {
  return startedMs(pod) + want.lifetimeSeconds * 1000 - END_MARGIN_MS > nowMs;
}

/** Pods that can take a call now, oldest first. */
export function servingPods(pods: V1Pod[], want: SessionWant, nowMs: number): SessionPod[] {
  return pods
    .filter((p) => callableAddress(p, FILES_CONTAINER) !== undefined && fits(p, want) && lifeLeft(p, want, nowMs))
    .map((p) => ({ pod: p.metadata!.name!, job: controllerJob(p) ?? '', ip: p.status!.podIP!, startedMs: startedMs(p) }))
    .filter((s) => s.job !== '')
    .sort((a, b) => a.startedMs - b.startedMs || (a.pod < b.pod ? -1 : 1));
}

/**
 * The youngest matching Pod on its way up (not serving yet, not finished), if any: while one is
 * starting there is no need to start another. Its age says whether it is worth waiting for.
 */
export function startingPod(pods: V1Pod[], want: SessionWant, nowMs: number): { ageMs: number } | undefined {
  let youngest: number | undefined;
  for (const p of pods) {
    const phase = p.status?.phase ?? 'Pending';
    if (phase === 'Succeeded' || phase === 'Failed' || !fits(p, want)) continue;
    // Running but not serving yet (no address, container not up) counts while it has life left.
    if (phase !== 'Pending' && !lifeLeft(p, want, nowMs)) continue;
    const created = p.metadata?.creationTimestamp ? new Date(p.metadata.creationTimestamp).getTime() : nowMs;
    youngest = youngest === undefined ? created : Math.max(youngest, created);
  }
  return youngest === undefined ? undefined : { ageMs: Math.max(0, nowMs - youngest) };
}

/** How long two instances starting a session at once name the same Job. */
export const BUCKET_MS = 10_000;

/**
 * The op id of the session Job to start for a world now: derived from the server, its world claim,
 * the node, the image and a 10-second time bucket (`prefix` tells the kinds apart), so two
 * instances starting one at the same moment create the same Job and the second gets AlreadyExists.
 */
export function sessionOpId(prefix: string, server: string, want: SessionWant, nowMs: number): string {
  const bucket = Math.floor(nowMs / BUCKET_MS);
  return `${prefix}${createHash('sha256')
    .update(`${server}\n${want.claim}\n${want.node ?? ''}\n${want.image}\n${bucket}`)
    .digest('hex')
    .slice(0, 15)}`;
}

/**
 * The embedded cluster's kubelet, run against a real kube-apiserver: registers Node `local`
 * (InternalIP 127.0.0.1, `daemonEndpoints.kubeletEndpoint.Port` = its HTTPS port, Ready), schedules
 * and runs the Pods as local processes through `RealNodeApi`, and serves
 * `GET /containerLogs/{ns}/{pod}/{container}` over HTTPS (self-signed; the apiserver does not
 * verify a kubelet's certificate without `--kubelet-certificate-authority`), so `pods/log` goes
 * through the real apiserver's proxy: the 204 of an unscheduled Pod comes from the apiserver
 * itself, the 400 "waiting to start" from here as plain text.
 *
 * @module
 */

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { AdminClient } from '../admin-client.ts';
import type { Faults } from '../faults.ts';
import { listenLoopback } from '../listen.ts';
import type { Recorder } from '../records.ts';
import type { KObject } from '../store.ts';
import { Kubelet, type PodTiming, type ProgramFn } from './index.ts';
import type { LogQuery } from './logs.ts';
import { RealNodeApi } from './real-node-api.ts';

type Log = { info(...a: unknown[]): void; warn(...a: unknown[]): void };

export interface RealKubeletOptions {
  admin: AdminClient;
  nodeName?: string;
  dataDir: string;
  repoRoot: string;
  podTiming?: (pod: V1Pod) => PodTiming;
  program?: ProgramFn;
  claimPath?: (claim: string, namespace: string) => string | undefined;
  faults: Faults;
  recorder: Recorder;
  logger: Log;
  backoffScale?: number;
}

export interface RealKubelet {
  kubelet: Kubelet;
  nodeName: string;
  /** The HTTPS port registered as the Node's kubelet endpoint. */
  port: number;
  close(): Promise<void>;
}

/** A throwaway self-signed certificate for 127.0.0.1 (openssl is a tier prerequisite). */
function selfSignedCert(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'felis-kubelet-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);

/** The kubelet's reading of the query the apiserver forwards verbatim. */
export function logQueryFrom(q: URLSearchParams): LogQuery | string {
  const int = (k: string): number | undefined | string => {
    const v = q.get(k);
    if (v === null || v === '') return undefined;
    return /^[+-]?\d+$/.test(v) ? Number(v) : `strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`;
  };
  const out: LogQuery = {};
  const tail = q.get('tailLines') ?? q.get('tail');
  if (tail !== null && tail !== '' && tail !== 'all') {
    if (!/^[+-]?\d+$/.test(tail)) return `strconv.ParseInt: parsing ${JSON.stringify(tail)}: invalid syntax`;
    out.tailLines = Number(tail);
  }
  for (const k of ['limitBytes', 'sinceSeconds'] as const) {
    const v = int(k);
    if (typeof v === 'string') return v;
    if (v !== undefined) out[k] = v;
  }
  out.follow = TRUE.has(q.get('follow') ?? '');
  out.previous = TRUE.has(q.get('previous') ?? '');
  out.timestamps = TRUE.has(q.get('timestamps') ?? '');
  const since = q.get('sinceTime');
  if (since) out.sinceTime = since;
  return out;
}

async function registerNode(admin: AdminClient, name: string, port: number): Promise<void> {
  const now = `${new Date().toISOString().slice(0, 19)}Z`;
  const status = {
    // Only InternalIP: the apiserver prefers Hostname, and `local` does not resolve.
    addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
    daemonEndpoints: { kubeletEndpoint: { Port: port } },
    conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'felis-world local kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now }],
    nodeInfo: { kubeletVersion: 'felis-local', operatingSystem: 'linux', architecture: 'amd64' },
  };
  const created = await admin.call('POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' } },
    status,
  });
  if (created.status === 201) return;
  if (created.status !== 409) throw new Error(`register node ${name}: HTTP ${created.status} ${created.text.slice(0, 300)}`);
  // It exists (an earlier stack): point it at this kubelet's port.
  await admin.must('PATCH', `/api/v1/nodes/${name}/status`, { status }, 'application/merge-patch+json');
}

export async function startRealKubelet(opts: RealKubeletOptions): Promise<RealKubelet> {
  const nodeName = opts.nodeName ?? 'local';
  const api = new RealNodeApi(opts.admin, { nodeName, logger: opts.logger });
  // The Job controller here is the real one: the Pod's creation is noted when first seen.
  const seen = new Set<string>();
  const podsToRun = api.podsToRun.bind(api);
  api.podsToRun = async (): Promise<KObject[]> => {
    const pods = await podsToRun();
    for (const p of pods) {
      if (seen.has(p.metadata.uid!)) continue;
      seen.add(p.metadata.uid!);
      const owner = (p.metadata.ownerReferences ?? []).find((r) => r.controller && r.kind === 'Job');
      opts.recorder.podCreated({ name: p.metadata.name!, labels: p.metadata.labels, jobUid: owner?.uid }, performance.now());
    }
    return pods;
  };
  const kubelet = new Kubelet(api, {
    dataDir: opts.dataDir,
    repoRoot: opts.repoRoot,
    podTiming: opts.podTiming ?? (() => ({ unscheduledMs: 0, creatingMs: 0 })),
    program: opts.program,
    claimPath: opts.claimPath,
    faults: opts.faults,
    recorder: opts.recorder,
    logger: opts.logger,
    backoffScale: opts.backoffScale ?? 1,
  });

  const server: Server = createServer(selfSignedCert(), (req, res) => {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)\/?$/.exec(url.pathname);
    const plain = (code: number, text: string) => {
      res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(Buffer.byteLength(text)) });
      res.end(text);
    };
    if (req.method !== 'GET' || !m) return plain(404, '404 page not found\n');
    const [ns, pod, container] = m.slice(1).map(decodeURIComponent) as [string, string, string];
    const query = logQueryFrom(url.searchParams);
    if (typeof query === 'string') return plain(400, query);
    const r = kubelet.containerLogs(ns, pod, container, query);
    if (!r.ok) return plain(r.code, r.message);
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const stream = r.stream;
    res.on('close', () => stream.destroy());
    stream.on('data', (chunk: Buffer) => res.write(chunk));
    stream.on('end', () => res.end());
    stream.on('error', () => res.destroy());
  });
  const listening = await listenLoopback(server);
  const port = listening.port;
  await registerNode(opts.admin, nodeName, port);
  kubelet.start();

  let closing: Promise<void> | undefined;
  return {
    kubelet,
    nodeName,
    port,
    close() {
      closing ??= (async () => {
        await kubelet.close();
        await listening.close();
      })();
      return closing;
    },
  };
}

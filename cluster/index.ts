/**
 * The embedded cluster: an emulated kube-apiserver for the API subset felis-world uses (batch/v1
 * Jobs, core/v1 Pods with `pods/log`, PersistentVolumeClaims, the `MinecraftServer` custom
 * resource), RBAC from a manifest, a Job controller, a garbage collector, and a one-node kubelet
 * that runs Job Pods as local processes. Product code never imports this; tests, the bench and
 * `npm start` do, and talk to it through `@kubernetes/client-node` over HTTPS (the cluster's own CA,
 * `tls.ts`).
 *
 * @example
 * ```ts
 * const cluster = await startCluster({ dataDir, rbacManifest: 'knative/rbac.yaml' });
 * const kc = cluster.kubeConfig(cluster.tokenFor('minecraft', 'felis-world'));
 * // … use kc with client-node …
 * await cluster.close();
 * ```
 *
 * @module
 */

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeConfig, V1JobCondition, V1Pod } from '@kubernetes/client-node';
import { Agent as UndiciAgent, fetch as undiciFetch } from 'undici';
import { reuseConnections } from '../lib/kube/connections.ts';
import { createApiServer, RequestCounter } from './apiserver.ts';
import { Faults } from './faults.ts';
import { GarbageCollector } from './garbage-collector.ts';
import type { ClusterHarness } from './harness.ts';
import { type JobCondition, JobController } from './job-controller.ts';
import { minecraftServers } from './kinds/custom.ts';
import { jobs } from './kinds/job.ts';
import { persistentVolumeClaims, pods } from './kinds/pod.ts';
import { tokenKubeConfig, tokenKubeconfigYaml } from './kubeconfig.ts';
import { Kubelet, type ProgramFn } from './kubelet/index.ts';
import { PodLogFiles } from './kubelet/log-files.ts';
import { InProcessNodeApi } from './kubelet/node-api.ts';
import { type NodeRestartResult, recoverNode, removeStalePodDirs } from './kubelet/node-restart.ts';
import { listenLoopback } from './listen.ts';
import { PersistentState } from './persist.ts';
import { Authenticator, RbacAuthorizer } from './rbac.ts';
import { Recorder } from './records.ts';
import { Registry } from './registry.ts';
import { Store } from './store.ts';
import { clusterTls } from './tls.ts';

export type { PodBehaviour, RequestFault } from './faults.ts';
export type { NodeRestartResult } from './kubelet/node-restart.ts';
export { ClusterStateUnreadableError, DataDirInUseError } from './persist.ts';
export type { PodRecord } from './records.ts';

export interface ClusterLogger {
  info(...a: unknown[]): void;
  warn(...a: unknown[]): void;
}

export interface StartClusterOptions {
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Worlds live under `<dataDir>/worlds/<server>`. */
  dataDir: string;
  /** The RBAC manifest (e.g. `knative/rbac.yaml`). */
  rbacManifest: string;
  /** Default `['minecraft', 'default']`. */
  namespaces?: string[];
  /** How long a Pod stays unscheduled, then in ContainerCreating (default 0/0). */
  podTiming?: (pod: V1Pod) => { unscheduledMs: number; creatingMs: number };
  /** The local command for a container; default maps `/usr/local/bin/felis` to `dist/felis.mjs`. */
  program?: ProgramFn;
  /** The local directory behind a claim; default `world-<server>-0` → `<dataDir>/worlds/<server>`. */
  claimPath?: (claim: string, namespace: string) => string | undefined;
  /** Multiplies `ttlSecondsAfterFinished` (tests use e.g. 0.01). Default 1. */
  ttlScale?: number;
  /**
   * Multiplies the Job controller's pod-failure back-off and the kubelet's container restart
   * back-off (10 s doubling in Kubernetes). Default 1. Not in the original brief; optional.
   */
  backoffScale?: number;
  /**
   * Keep the cluster's objects in `<dataDir>/cluster.sqlite` across restarts and crashes, and
   * journal the Pod processes so a restart ends what a crash left running, and keep container logs
   * in `<dataDir>/pod-logs` (bounded per container, removed with their Pod). Default false (the
   * tests' clusters live in memory). Only one cluster at a time may open a data directory.
   */
  persist?: boolean;
  /**
   * On `close`, SIGTERM the running Pod processes and give them this long before SIGKILL, as a
   * node's graceful shutdown does (`npm start` on SIGTERM). Default 0: SIGKILL at once.
   */
  shutdownGraceMs?: number;
  logger?: ClusterLogger;
}

/** The embedded cluster: everything a test harness needs (`ClusterHarness`), synchronously. */
export interface EmbeddedCluster extends ClusterHarness {
  /** The cluster CA (PEM) the API server's certificate is signed with; every kubeconfig carries it. */
  caPem: string;
  /** A fetch against the API server (a path, or a full URL) that trusts the cluster CA. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** A new token for user `name`, minted for `audiences` (as a static token file or an OIDC issuer would give). */
  tokenForUser(name: string, groups: string[], audiences: string[]): string;
  /** Sets a Job's status conditions directly (leniently: no status validation). */
  setJobConditions(namespace: string, name: string, conditions: V1JobCondition[]): void;
  /** Kills every running Pod process group synchronously (for a forced exit that cannot wait). */
  killPodsNow(): void;
  /** How many Pod loopback addresses are allocated now (one per Pod the kubelet runs). */
  podAddressesInUse(): number;
  /** What the start found of a previous run (persistent clusters; empty otherwise). */
  nodeRestart: NodeRestartResult;
  /** Stops the Job controller's syncs (a controller that lags); nothing is lost, resume catches up. */
  pauseJobController(): void;
  resumeJobController(): void;
}

const silent: ClusterLogger = { info() {}, warn() {} };

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

function conditionToJson(c: V1JobCondition): JobCondition {
  const t = (d: Date | string | undefined) => (d === undefined ? undefined : typeof d === 'string' ? d : `${d.toISOString().slice(0, 19)}Z`);
  const out: JobCondition = { type: c.type, status: c.status ?? 'True' };
  if (c.reason !== undefined) out.reason = c.reason;
  if (c.message !== undefined) out.message = c.message;
  const lp = t(c.lastProbeTime as Date | string | undefined);
  const lt = t(c.lastTransitionTime as Date | string | undefined);
  if (lp) out.lastProbeTime = lp;
  if (lt) out.lastTransitionTime = lt;
  return out;
}

export async function startCluster(opts: StartClusterOptions): Promise<EmbeddedCluster> {
  const logger = opts.logger ?? silent;
  const state = opts.persist ? PersistentState.open(opts.dataDir) : undefined;
  try {
    return await start(opts, logger, state);
  } catch (err) {
    state?.close();
    throw err;
  }
}

async function start(opts: StartClusterOptions, logger: ClusterLogger, state: PersistentState | undefined): Promise<EmbeddedCluster> {
  const store = new Store(opts.namespaces ?? ['minecraft', 'default'], state);
  const registry = new Registry(store, [jobs, pods, persistentVolumeClaims, minecraftServers]);
  // Before anything runs or answers: end the previous run's Pod processes and fail their Pods.
  const nodeRestart: NodeRestartResult = state ? await recoverNode(registry, state, 'local', logger) : { killed: [], survivors: [], failedPods: [] };
  if (state) removeStalePodDirs(opts.dataDir, registry);
  const authn = new Authenticator();
  let rbac = new RbacAuthorizer();
  await rbac.loadFile(opts.rbacManifest);
  const faults = new Faults();
  const counter = new RequestCounter();
  const recorder = new Recorder();
  const backoffScale = opts.backoffScale ?? 1;

  const gc = new GarbageCollector(registry, logger);
  const jobController = new JobController(registry, { ttlScale: opts.ttlScale ?? 1, backoffScale, recorder, logger });
  const kubelet = new Kubelet(new InProcessNodeApi(registry, 'local'), {
    dataDir: opts.dataDir,
    repoRoot: REPO_ROOT,
    podTiming: opts.podTiming ?? (() => ({ unscheduledMs: 0, creatingMs: 0 })),
    program: opts.program,
    claimPath: opts.claimPath,
    faults,
    recorder,
    logger,
    backoffScale,
    journal: state,
    shutdownGraceMs: opts.shutdownGraceMs,
    // Like a node's /var/log/pods: a Pod's log outlives a restart and goes with the Pod.
    logFiles: state ? new PodLogFiles(join(opts.dataDir, 'pod-logs'), { onError: (err) => logger.warn({ err: String(err) }, 'kubelet: writing a container log file failed') }) : undefined,
  });
  gc.start();
  jobController.start();
  kubelet.start();

  // The CA is kept in the data directory when the cluster is (a restart serves a certificate the
  // kubeconfigs written before it still trust); ephemeral clusters share this process's CA.
  const tls = await clusterTls(state ? opts.dataDir : undefined).catch(async (err) => {
    jobController.stopAll();
    gc.stop();
    await kubelet.close();
    throw err;
  });
  const server = createApiServer({ registry, authn, rbac: () => rbac, faults, counter, kubelet, recorder, logger }, tls);
  const listening = await listenLoopback(server, opts.port ?? 0, opts.host ?? '127.0.0.1').catch(async (err) => {
    // Nothing may keep running on a data directory this start gives up (the caller closes it).
    jobController.stopAll();
    gc.stop();
    await kubelet.close();
    throw err;
  });
  const host = listening.address.includes(':') ? `[${listening.address}]` : listening.address;
  const url = `https://${host}:${listening.port}`;
  const dispatcher = new UndiciAgent({ connect: { ca: tls.caPem }, keepAliveTimeout: 10_000 });

  // One kept-alive connection pool per KubeConfig, as the product's own clients have (client-node
  // alone opens a connection, and over HTTPS does a handshake, for every call).
  const kubeConfig = (token: string): KubeConfig => reuseConnections(tokenKubeConfig(url, token, 'embedded', 'minecraft', tls.caPem));

  let closing: Promise<void> | undefined;
  return {
    url,
    adminToken: authn.adminToken,
    tokenFor: (ns, sa) => authn.tokenFor(ns, sa),
    kubeConfig,
    kubeconfigYaml: (token) => tokenKubeconfigYaml(url, token, 'embedded', 'minecraft', tls.caPem),
    caPem: tls.caPem,
    fetch: (path, init = {}) => undiciFetch(/^https?:/.test(path) ? path : url + path, { ...init, dispatcher } as Parameters<typeof undiciFetch>[1]) as unknown as Promise<Response>,
    faults: {
      failNext: (m) => faults.failNext(m),
      pod: (selector, b) => faults.pod(selector, b),
      clear: () => faults.clear(),
    },
    requestToken: async (ns, sa, audiences) => authn.requestToken(ns, sa, audiences),
    tokenForUser: (name, groups, audiences) => authn.tokenForUser(name, groups, audiences),
    applyRbac: async (yaml) => rbac.applyYaml(yaml),
    async deleteRbac(kind, name, namespace = 'minecraft') {
      rbac.delete(kind, name, namespace);
    },
    async setRbacManifest(path) {
      const next = new RbacAuthorizer();
      await next.loadFile(path);
      rbac = next;
    },
    counts: (user) => counter.counts(user),
    resetCounts: () => counter.reset(),
    podRecord: (opId) => recorder.get(opId),
    setJobConditions: (ns, name, conditions) => jobController.setConditions(ns, name, conditions.map(conditionToJson)),
    killPodsNow: () => kubelet.killAllNow(),
    podAddressesInUse: () => kubelet.podIps.size,
    nodeRestart,
    pauseJobController: () => jobController.pause(),
    resumeJobController: () => jobController.resume(),
    close() {
      closing ??= (async () => {
        jobController.stopAll();
        gc.stop();
        try {
          await kubelet.close();
          await listening.close();
          await dispatcher.close();
        } finally {
          state?.close();
        }
      })();
      return closing;
    },
  };
}

/**
 * The whole product on one machine for end-to-end tests: a cluster, the functions' routes served
 * over HTTP on loopback, and the real client-node between them.
 *
 * Two backends, one suite:
 * - default (`npm test`): the embedded cluster (RBAC from knative/rbac.yaml, a kubelet running
 *   dist/felis.mjs);
 * - `FELIS_TEST_CLUSTER_ENV=<workdir>/env` (`npm run test:cluster`): the real v1.20 control plane
 *   started by test/cluster-tier/control-plane/up.sh, with the same kubelet registered as Node
 *   `local`, and a counting proxy in front of the apiserver (cluster/real/).
 *
 * Either way every answer the functions give is checked against docs/openapi.json on its way out
 * (./openapi-check.ts): a mismatch is logged at once, and `close()` throws listing them all.
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerType } from '@hono/node-server';
import { waitFor } from '../../cluster/cluster.test-kit.ts';
import { startApiServerSource } from '../../cluster/event-sources.ts';
import type { ClusterHarness } from '../../cluster/harness.ts';
import { startCluster } from '../../cluster/index.ts';
import type { ProgramFn } from '../../cluster/kubelet/index.ts';
import { readControlPlaneEnv } from '../../cluster/real/admin.ts';
import { startRealCluster } from '../../cluster/real/index.ts';
import { FUNCTIONS } from '../../functions/index.ts';
import type { BrowseConfig } from '../../lib/browse/config.ts';
import { configFromEnv } from '../../lib/config.ts';
import type { DownloadConfig } from '../../lib/downloads/config.ts';
import type { EditorConfig } from '../../lib/files/editor.ts';
import { authFromEnv } from '../../lib/http/auth.ts';
import { buildDeps } from '../../lib/http/deps.ts';
import { createHostApp, listen } from '../../lib/http/host.ts';
import { createLogger, type Logger } from '../../lib/log.ts';
import { PULL_JOBS } from '../../lib/maintenance/pull-placement.ts';
import { jsonCall } from '../../lib/testing/json-call.ts';
import type { UploadConfig } from '../../lib/uploads/config.ts';
import { seedDemoWorld } from '../../scripts/demo-world.ts';
import { checkedApp, loadChecker } from './openapi-check.ts';
import { createServer, STOPPED } from './servers.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const FUNCTION_USER = 'system:serviceaccount:minecraft:felis-world';
export const TOKEN = 'test-token-0123456789';

/** The env file of a running control plane: set by `npm run test:cluster`. */
const CLUSTER_ENV = process.env.FELIS_TEST_CLUSTER_ENV || undefined;
/** Which cluster the suite runs against. */
export const TIER: 'embedded' | 'real' = CLUSTER_ENV ? 'real' : 'embedded';
export const REAL = TIER === 'real';
/** A timeout that allows for the real controller-manager (it reacts within about a second). */
export const tierMs = (embeddedMs: number, realMs = embeddedMs * 3) => (REAL ? realMs : embeddedMs);

/** Polls `fn` every 50 ms (both tiers' API servers answer each call) until it gives a value. */
export const until = <T>(fn: () => Promise<T | undefined>, what: string, ms: number): Promise<T> => waitFor(fn, what, ms, 50);

export interface StackOptions {
  /** Overrides of the editor configuration (e.g. a short timeout). */
  editor?: Partial<EditorConfig>;
  /** No worker image: the editor is not configured. */
  noImage?: boolean;
  restoreTemplate?: string;
  /** Browse sessions on (a fresh key in the data directory), with these overrides; off by default. */
  browse?: Partial<BrowseConfig>;
  /** Signed downloads on (the same fresh key as browse sessions), with these overrides; off by default. */
  downloads?: Partial<DownloadConfig>;
  /** Upload-session settings (uploads need `browse` too: the shared job key). */
  uploads?: UploadConfig;
  /** Where the functions log (default: silent). */
  logger?: Logger;
  /** Auth settings (FELIS_AUTH_*) over token mode with TOKEN: e.g. `{ FELIS_AUTH_MODE: 'kubernetes' }`. */
  authEnv?: Record<string, string>;
  /** FELIS_CORS_ORIGINS: the browser origins allowed to call (none: CORS off). */
  corsOrigins?: string[];
  /** FELIS_JOIN_CHANGES: false keeps Felis's rule (a change while another holds the world is 409). */
  joinChanges?: boolean;
  /**
   * The pull Jobs' changes go to the settle function, which places a pull's staged file, as
   * knative/components/eventing wires it (an ApiServerSource); false leaves them unplaced. On by default.
   */
  placePulls?: boolean;
}

export interface Stack {
  url: string;
  tier: 'embedded' | 'real';
  cluster: ClusterHarness;
  dataDir: string;
  world: string;
  /** Replace the program a Pod runs (fault injection); undefined restores the real Job program. */
  program: ProgramFn | undefined;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; text: string; headers: Headers }>;
  close(): Promise<void>;
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  // Before anything starts: without the document there is nothing to hold the answers to.
  const checker = loadChecker();
  const dataDir = mkdtempSync(join(tmpdir(), 'felis-e2e-'));
  const world = seedDemoWorld(dataDir, 'survival');
  const stack = {} as Stack;
  stack.program = undefined;
  // undefined: the cluster's default (felis containers run dist/felis.mjs, others as host commands).
  const program: ProgramFn = (container, pod, ctx) => stack.program?.(container, pod, ctx);
  // FELIS_TEST_RBAC: run the suite with another Role (e.g. one verb removed, to see it fail).
  const rbacManifest = process.env.FELIS_TEST_RBAC || join(ROOT, 'knative/rbac.yaml');
  let cluster: ClusterHarness;
  try {
    cluster = CLUSTER_ENV ? await startRealCluster({ env: readControlPlaneEnv(CLUSTER_ENV), dataDir, rbacManifest, program }) : await startCluster({ dataDir, rbacManifest, ttlScale: 0.01, program });
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  await createServer(cluster, 'survival', STOPPED);
  const logger = opts.logger ?? createLogger('e2e', { LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' });
  const base = configFromEnv({ FELIS_IMAGE: 'felis-world/files:dev' }).editor!;
  const cfg = opts.noImage ? undefined : { ...base, ...opts.editor };
  const kc = cluster.kubeConfig(cluster.tokenFor('minecraft', 'felis-world'));
  let browse: BrowseConfig | undefined;
  let downloads: DownloadConfig | undefined;
  if (opts.browse || opts.downloads) {
    const keyFile = join(dataDir, 'job-key');
    writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
    const keyed = configFromEnv({ FELIS_JOB_KEY_FILE: keyFile });
    if (opts.browse) browse = { ...keyed.browse!, ...opts.browse };
    if (opts.downloads) downloads = { ...keyed.downloads!, ...opts.downloads };
  }
  const deps = buildDeps(kc, { namespace: 'minecraft', editor: cfg, logger, restoreTemplate: opts.restoreTemplate, browse, downloads, uploads: opts.uploads, joinChanges: opts.joinChanges });
  const auth = authFromEnv({ FELIS_TOKEN: TOKEN, FELIS_NAMESPACE: 'minecraft', ...opts.authEnv }, kc, logger);
  const checked = checkedApp(createHostApp({ logger, auth, corsOrigins: opts.corsOrigins }, deps, Object.values(FUNCTIONS)), checker);
  const server: ServerType = await new Promise((res) => {
    const s = listen(checked.app, { port: 0, hostname: '127.0.0.1', logger }, () => res(s));
  });
  const addr = server.address() as { port: number };
  // A finished pull is placed by the settle pass its Job's change starts (functions/settle).
  const pullSource =
    opts.placePulls === false
      ? undefined
      : startApiServerSource({ kubeConfig: cluster.kubeConfig(cluster.adminToken), namespace: 'minecraft', labelSelector: PULL_JOBS, sink: `http://127.0.0.1:${addr.port}/` });
  Object.assign(stack, {
    url: `http://127.0.0.1:${addr.port}`,
    tier: TIER,
    cluster,
    dataDir,
    world,
    call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
      return jsonCall((p, init) => fetch(stack.url + p, init), TOKEN, method, path, body, headers);
    },
    async close() {
      await pullSource?.stop();
      await new Promise<void>((res) => server.close(() => res()));
      await cluster.close();
      rmSync(dataDir, { recursive: true, force: true });
      await checked.assertClean();
    },
  });
  return stack;
}

export const q = (p: string) => encodeURIComponent(p);

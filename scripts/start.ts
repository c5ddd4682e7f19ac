/**
 * `npm start`: every function on one port (PORT, default 8080, loopback only), over an embedded
 * Kubernetes emulation whose kubelet runs the Job program over FELIS_DATA/worlds/<server>.
 * With KUBECONFIG set, or inside a cluster, the same functions use that cluster instead.
 *
 * The embedded cluster keeps its state in FELIS_DATA/cluster.sqlite, so locks, Jobs and servers
 * survive a restart. Two knobs for trying crashes by hand (and for the restart tests):
 * FELIS_EMBEDDED_JOB_DELAY_MS makes each Job program wait that long after its process has started,
 * before it touches the world; FELIS_SHUTDOWN_SECONDS (default 10) bounds the stop on SIGTERM.
 *
 * FELIS_AUTH_MODE=kubernetes: callers present Kubernetes tokens, reviewed by the cluster. On the
 * embedded cluster this applies the example roles of knative/examples/ and prints two user tokens
 * to try them with: alice, editor of `survival` only, and bob, viewer of every server.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeConfig, V1Container } from '@kubernetes/client-node';
import { type EventSource, startApiServerSource, startPingSource } from '../cluster/event-sources.ts';
import { privateDataDir, privateFile } from '../cluster/private-files.ts';
import { reviewerGrantYaml } from '../cluster/review-grant.ts';
import { FUNCTIONS } from '../functions/index.ts';
import { authConfigFromEnv } from '../lib/auth/config.ts';
import { ensureJobKeyFile } from '../lib/browse/key-file.ts';
import { configFromEnv } from '../lib/config.ts';
import { authFromEnv } from '../lib/http/auth.ts';
import { corsOriginsFromEnv } from '../lib/http/cors.ts';
import { buildDeps } from '../lib/http/deps.ts';
import { createHostApp, listen } from '../lib/http/host.ts';
import { stopOnSignals } from '../lib/http/serve.ts';
import { loadKubeConfig } from '../lib/kube/config.ts';
import { createLogger } from '../lib/log.ts';
import { PULL_JOBS } from '../lib/maintenance/pull-placement.ts';
import { buildJobProgram } from './build.ts';
import { seedDemoServer, seedDemoWorld } from './demo-world.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const env = { ...process.env };
const logger = createLogger('felis-world', env);
const port = Number(env.PORT ?? 8080);
// Signed download URLs name this server: their origin comes from this setting only, never from a
// request's Host header.
env.FELIS_DOWNLOAD_BASE_URL ||= `http://127.0.0.1:${port}`;
const token = env.FELIS_TOKEN || randomBytes(18).toString('base64url');
const dataDir = resolve(env.FELIS_DATA ?? join(root, 'data'));
const external = Boolean(env.KUBECONFIG || env.KUBERNETES_SERVICE_HOST);
const jobDelayMs = Math.max(0, Number(env.FELIS_EMBEDDED_JOB_DELAY_MS ?? 0) || 0);
const shutdownMs = Math.max(0, Number(env.FELIS_SHUTDOWN_SECONDS ?? 10) || 0) * 1000;
const authCfg = authConfigFromEnv(env);
/**
 * The share of the stop budget the Job processes get between SIGTERM and SIGKILL: half of it, at
 * most 5 s — a placement of tens of thousands of files finishes or rolls back in a second or two.
 */
const podShutdownGraceMs = (budgetMs: number) => Math.min(5000, Math.floor(budgetMs / 2));
const kubernetesAuth = authCfg.mode === 'kubernetes';

/**
 * The embedded cluster's grants for kubernetes mode: the functions may ask for reviews; bob views
 * every server (alice's grant is knative/examples/one-server.yaml); the local event sources'
 * identity may settle (as a Trigger's OIDC identity would be granted in a cluster).
 */
const EMBEDDED_GRANTS = `
${reviewerGrantYaml()}---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: bob-views-all, namespace: minecraft }
subjects: [{ kind: User, apiGroup: rbac.authorization.k8s.io, name: bob }]
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: felis-world-viewer }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: felis-world-local-sources }
subjects: [{ kind: ServiceAccount, name: felis-world-local-sources, namespace: minecraft }]
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: felis-world-settler }
`;

/** The Job program, started as a process that first sleeps (`exec` keeps the pid and the group). */
function delayedJobProgram(container: V1Container): { command: string[] } | undefined {
  const command = container.command ?? [];
  if (jobDelayMs === 0 || command[0] !== '/usr/local/bin/felis') return undefined;
  const felis = [process.execPath, join(root, 'dist/felis.mjs'), ...command.slice(1), ...(container.args ?? [])];
  return { command: ['sh', '-c', `sleep ${(jobDelayMs / 1000).toFixed(3)}; exec "$@"`, 'felis-delayed', ...felis] };
}

await buildJobProgram();

let kc: KubeConfig;
let stopCluster: (() => Promise<void>) | undefined;
let killPodsNow: (() => void) | undefined;
let adminNote = '';
let adminKc: KubeConfig | undefined;
let userTokens: { alice: string; bob: string; sources: string } | undefined;
if (external) {
  kc = loadKubeConfig(env);
  logger.info({ server: kc.getCurrentCluster()?.server }, 'using the cluster from KUBECONFIG / in-cluster config');
} else {
  const { startCluster, ClusterStateUnreadableError, DataDirInUseError } = await import('../cluster/index.ts');
  // FELIS_DATA 0700, and its state, job key and admin kubeconfig 0600, also when they were left readable.
  privateDataDir(dataDir);
  // Persistent: servers, Jobs, Pods, claims and locks survive a restart (FELIS_DATA/cluster.sqlite).
  const cluster = await startCluster({
    dataDir,
    rbacManifest: join(root, 'knative/rbac.yaml'),
    logger,
    persist: true,
    program: delayedJobProgram,
    shutdownGraceMs: podShutdownGraceMs(shutdownMs),
  }).catch((err) => {
    if (err instanceof DataDirInUseError || err instanceof ClusterStateUnreadableError) {
      console.error(`felis-world: ${err.message}`);
      process.exit(1);
    }
    throw err;
  });
  stopCluster = () => cluster.close();
  adminKc = cluster.kubeConfig(cluster.adminToken);
  killPodsNow = () => cluster.killPodsNow();
  kc = cluster.kubeConfig(cluster.tokenFor('minecraft', 'felis-world'));
  env.FELIS_IMAGE ??= 'felis-world/files:dev';
  // Browse sessions: the key their tokens derive from, kept with the cluster's state.
  env.FELIS_JOB_KEY_FILE ??= ensureJobKeyFile(dataDir);
  privateFile(join(dataDir, 'job-key'));
  seedDemoWorld(dataDir);
  await seedDemoServer(cluster.kubeConfig(cluster.adminToken));
  // For poking at the cluster by hand (kubectl --kubeconfig, or curl with the admin token).
  const adminFile = join(dataDir, 'admin.kubeconfig');
  privateFile(adminFile, { create: true });
  const adminFd = openSync(adminFile, constants.O_WRONLY | constants.O_TRUNC | constants.O_NOFOLLOW);
  try {
    writeFileSync(adminFd, cluster.kubeconfigYaml(cluster.adminToken));
  } finally {
    closeSync(adminFd);
  }
  adminNote = `embedded API: ${cluster.url} (HTTPS, CA ${join(dataDir, 'ca.crt')}; admin token ${cluster.adminToken}; kubeconfig ${join(dataDir, 'admin.kubeconfig')}: kubectl --kubeconfig ${join(dataDir, 'admin.kubeconfig')} get jobs,pods,minecraftservers)`;
  if (kubernetesAuth) {
    const examples = ['roles.yaml', 'one-server.yaml', 'settle-events.yaml'].map((f) => readFileSync(join(root, 'knative/examples', f), 'utf8'));
    await cluster.applyRbac([...examples, EMBEDDED_GRANTS].join('\n---\n'));
    const aud = [authCfg.audience];
    userTokens = {
      alice: cluster.tokenForUser('alice', [], aud),
      bob: cluster.tokenForUser('bob', [], aud),
      sources: await cluster.requestToken('minecraft', 'felis-world-local-sources', [authCfg.eventAudience]),
    };
  }
  logger.info({ api: cluster.url, worlds: join(dataDir, 'worlds') }, 'embedded cluster running');
}

let deps: ReturnType<typeof buildDeps>;
try {
  deps = buildDeps(kc, { ...configFromEnv(env), logger });
} catch (err) {
  // An operator's mistake in the environment: said in one line, and the embedded cluster stopped.
  console.error(`felis-world: ${(err as Error).message}`);
  await stopCluster?.();
  process.exit(1);
}
const app = createHostApp({ logger, auth: authFromEnv({ ...env, FELIS_TOKEN: token }, kc, logger), corsOrigins: corsOriginsFromEnv(env) }, deps, Object.values(FUNCTIONS));
const sources: EventSource[] = [];
const server = listen(app, { port, hostname: '127.0.0.1', logger }, (info) => {
  const u = `http://127.0.0.1:${info.port}`;
  if (adminKc) {
    // As knative/eventing.yaml wires a deployment: a backup Job's change, a pull Job's change and
    // a tick every minute each start a settling pass, so a finished restore chain settles and a
    // finished pull's file is placed without a caller.
    const sink = `${u}/`;
    const sourceToken = userTokens?.sources;
    sources.push(startApiServerSource({ kubeConfig: adminKc, namespace: 'minecraft', labelSelector: 'app.kubernetes.io/managed-by=felis-backup', sink, logger, token: sourceToken }));
    sources.push(startApiServerSource({ kubeConfig: adminKc, namespace: 'minecraft', labelSelector: PULL_JOBS, sink, logger, token: sourceToken }));
    sources.push(startPingSource({ sink, namespace: 'minecraft', name: 'felis-world-settle-tick', periodMs: 60_000, logger, token: sourceToken }));
  }
  if (kubernetesAuth) {
    printKubernetesMode(u);
    return;
  }
  const auth = `-H "Authorization: Bearer ${token}"`;
  console.log(`
felis-world is serving on ${u}
token: ${token}${env.FELIS_TOKEN ? ' (from FELIS_TOKEN)' : ' (generated; set FELIS_TOKEN to choose one)'}
worlds: ${external ? "(the cluster's volumes)" : join(dataDir, 'worlds')}
${adminNote}

  curl -s ${auth} '${u}/api/v1/servers/survival/files?path='
  curl -s ${auth} '${u}/api/v1/servers/survival/file?path=server.properties'
  curl -s ${auth} -X PUT '${u}/api/v1/servers/survival/file?path=hello.txt' \\
       -d '{"content":"aGVsbG8K","content_sha256":"5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"}'
  curl -s ${auth} -X POST '${u}/api/v1/servers/survival/files/rename?path=hello.txt' -d '{"to":"hi.txt"}'
  curl -s ${auth} -X DELETE '${u}/api/v1/servers/survival/file?path=hi.txt'
  curl -s ${auth} '${u}/api/v1/servers/survival/holder'
  curl -s ${auth} -X POST '${u}/api/v1/servers/survival/start'
`);
});
/** What to try in kubernetes mode: the two users' tokens, and what each may do. */
function printKubernetesMode(u: string): void {
  const w = `-X PUT '${u}/api/v1/servers/survival/file?path=hello.txt' -d '{"content":"aGVsbG8K","content_sha256":"5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"}'`;
  const lines = userTokens
    ? `
alice (editor of survival only):   ${userTokens.alice}
bob   (viewer of every server):    ${userTokens.bob}
(tokens for audience ${authCfg.audience}; the roles are knative/examples/roles.yaml and one-server.yaml)

  A=${userTokens.alice}
  B=${userTokens.bob}
  curl -s -H "Authorization: Bearer $B" '${u}/api/v1/servers/survival/files?path='      # 200: bob lists
  curl -s -H "Authorization: Bearer $B" ${w}      # 403: bob may not write
  curl -s -H "Authorization: Bearer $A" ${w}      # 200: alice writes (the audit line names alice)
  curl -s -H "Authorization: Bearer $A" -X DELETE '${u}/api/v1/servers/survival/lock'      # 403: alice is no operator
`
    : `
Use a Kubernetes token for audience ${authCfg.audience}, e.g. kubectl create token <serviceaccount> --audience ${authCfg.audience}
`;
  console.log(`
felis-world is serving on ${u} (auth: kubernetes; callers present Kubernetes tokens)
worlds: ${external ? "(the cluster's volumes)" : join(dataDir, 'worlds')}
${adminNote}
${lines}`);
}

stopOnSignals(
  server,
  logger,
  shutdownMs,
  async () => {
    await Promise.all(sources.map((src) => src.stop()));
    await stopCluster?.();
  },
  // Pod processes run in their own process groups: even a forced exit ends them first.
  () => killPodsNow?.(),
);

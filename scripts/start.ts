/**
 * `npm start`: every function on one port (PORT, default 8080, loopback only), over an embedded
 * Kubernetes emulation whose kubelet runs the Job program over FELIS_DATA/worlds/<server>.
 * With KUBECONFIG set, or inside a cluster, the same functions use that cluster instead.
 *
 * The embedded cluster keeps its state in FELIS_DATA/cluster.sqlite, so locks, Jobs and servers
 * survive a restart. Two knobs for trying crashes by hand (and for the restart tests):
 * FELIS_EMBEDDED_JOB_DELAY_MS makes each Job program wait that long after its process has started,
 * before it touches the world; FELIS_SHUTDOWN_SECONDS (default 10) bounds the stop on SIGTERM.
 */
import { randomBytes } from 'node:crypto';
import { resolve, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileSync } from 'node:fs';
import type { KubeConfig, V1Container } from '@kubernetes/client-node';
import { buildJobProgram } from './build.ts';
import { seedDemoServer, seedDemoWorld } from './demo-world.ts';
import { createLogger } from '../lib/log.ts';
import { loadKubeConfig } from '../lib/kube/config.ts';
import { configFromEnv } from '../lib/config.ts';
import { ensureJobKeyFile } from '../lib/browse/key-file.ts';
import { buildDeps } from '../lib/http/deps.ts';
import { createHostApp, listen } from '../lib/http/host.ts';
import { stopOnSignals } from '../lib/http/serve.ts';
import { FUNCTIONS } from '../functions/index.ts';
import { startApiServerSource, startPingSource, type EventSource } from '../cluster/event-sources.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const env = { ...process.env };
const logger = createLogger('felis-world', env);
const port = Number(env.PORT ?? 8080);
const token = env.FELIS_TOKEN || randomBytes(18).toString('base64url');
const dataDir = resolve(env.FELIS_DATA ?? join(root, 'data'));
const external = Boolean(env.KUBECONFIG || env.KUBERNETES_SERVICE_HOST);
const jobDelayMs = Math.max(0, Number(env.FELIS_EMBEDDED_JOB_DELAY_MS ?? 0) || 0);
const shutdownMs = Math.max(0, Number(env.FELIS_SHUTDOWN_SECONDS ?? 10) || 0) * 1000;

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
if (external) {
  kc = loadKubeConfig(env);
  logger.info({ server: kc.getCurrentCluster()?.server }, 'using the cluster from KUBECONFIG / in-cluster config');
} else {
  const { startCluster, ClusterStateUnreadableError, DataDirInUseError } = await import('../cluster/index.ts');
  // Persistent: servers, Jobs, Pods, claims and locks survive a restart (FELIS_DATA/cluster.sqlite).
  const cluster = await startCluster({ dataDir, rbacManifest: join(root, 'knative/rbac.yaml'), logger, persist: true, program: delayedJobProgram }).catch((err) => {
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
  seedDemoWorld(dataDir);
  await seedDemoServer(cluster.kubeConfig(cluster.adminToken));
  // For poking at the cluster by hand (kubectl --kubeconfig, or curl with the admin token).
  writeFileSync(join(dataDir, 'admin.kubeconfig'), cluster.kubeconfigYaml(cluster.adminToken), { mode: 0o600 });
  adminNote = `embedded API: ${cluster.url} (admin token ${cluster.adminToken}; kubeconfig ${join(dataDir, 'admin.kubeconfig')})`;
  logger.info({ api: cluster.url, worlds: join(dataDir, 'worlds') }, 'embedded cluster running');
}

const deps = buildDeps(kc, { ...configFromEnv(env), logger });
const app = createHostApp({ logger, token: () => token }, deps, Object.values(FUNCTIONS));
const sources: EventSource[] = [];
const server = listen(app, { port, hostname: '127.0.0.1', logger }, (info) => {
  const u = `http://127.0.0.1:${info.port}`;
  if (adminKc) {
    // As knative/eventing.yaml wires a deployment: a backup Job's change and a tick every minute
    // each start a settling pass, so a finished restore chain settles without a caller.
    const sink = `${u}/`;
    sources.push(startApiServerSource({ kubeConfig: adminKc, namespace: 'minecraft', labelSelector: 'app.kubernetes.io/managed-by=felis-backup', sink, logger }));
    sources.push(startPingSource({ sink, namespace: 'minecraft', name: 'felis-world-settle-tick', periodMs: 60_000, logger }));
  }
  const auth = `-H "Authorization: Bearer ${token}"`;
  console.log(`
felis-world is serving on ${u}
token: ${token}${env.FELIS_TOKEN ? ' (from FELIS_TOKEN)' : ' (generated; set FELIS_TOKEN to choose one)'}
worlds: ${external ? '(the cluster\'s volumes)' : join(dataDir, 'worlds')}
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

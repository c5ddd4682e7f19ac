/**
 * `npm start`: every function on one port (PORT, default 8080, loopback only), over an embedded
 * Kubernetes emulation whose kubelet runs the Job program over FELIS_DATA/worlds/<server>.
 * With KUBECONFIG set, or inside a cluster, the same functions use that cluster instead.
 */
import { randomBytes } from 'node:crypto';
import { resolve, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import { buildJobProgram } from './build.ts';
import { seedDemoServer, seedDemoWorld } from './demo-world.ts';
import { createLogger } from '../lib/log.ts';
import { loadKubeConfig } from '../lib/kube/config.ts';
import { configFromEnv } from '../lib/config.ts';
import { buildDeps } from '../lib/http/deps.ts';
import { createHostApp, listen } from '../lib/http/host.ts';
import { stopOnSignals } from '../lib/http/serve.ts';
import { FUNCTIONS } from '../functions/index.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const env = { ...process.env };
const logger = createLogger('felis-world', env);
const port = Number(env.PORT ?? 8080);
const token = env.FELIS_TOKEN || randomBytes(18).toString('base64url');
const dataDir = resolve(env.FELIS_DATA ?? join(root, 'data'));
const external = Boolean(env.KUBECONFIG || env.KUBERNETES_SERVICE_HOST);

await buildJobProgram();

let kc: KubeConfig;
let stopCluster: (() => Promise<void>) | undefined;
let adminNote = '';
if (external) {
  kc = loadKubeConfig(env);
  logger.info({ server: kc.getCurrentCluster()?.server }, 'using the cluster from KUBECONFIG / in-cluster config');
} else {
  const { startCluster } = await import('../cluster/index.ts');
  const cluster = await startCluster({ dataDir, rbacManifest: join(root, 'knative/rbac.yaml'), logger });
  stopCluster = () => cluster.close();
  kc = cluster.kubeConfig(cluster.tokenFor('minecraft', 'felis-world'));
  env.FELIS_IMAGE ??= 'felis-world/files:dev';
  seedDemoWorld(dataDir);
  await seedDemoServer(cluster.kubeConfig(cluster.adminToken));
  // For poking at the cluster by hand (kubectl --kubeconfig, or curl with the admin token).
  writeFileSync(join(dataDir, 'admin.kubeconfig'), cluster.kubeconfigYaml(cluster.adminToken), { mode: 0o600 });
  adminNote = `embedded API: ${cluster.url} (admin token ${cluster.adminToken}; kubeconfig ${join(dataDir, 'admin.kubeconfig')})`;
  logger.info({ api: cluster.url, worlds: join(dataDir, 'worlds') }, 'embedded cluster running');
}

const deps = buildDeps(kc, { ...configFromEnv(env), logger });
const app = createHostApp({ logger, token: () => token }, deps, Object.values(FUNCTIONS));
const server = listen(app, { port, hostname: '127.0.0.1', logger }, (info) => {
  const u = `http://127.0.0.1:${info.port}`;
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
stopOnSignals(server, logger, 10_000, async () => {
  await stopCluster?.();
});

/**
 * `node bench/auth.bench.ts [--json] [--n N]`: what kubernetes auth mode adds to an authorized
 * request. The same route (a constant answer, so only auth differs) is called N times (default
 * 300) in token mode, in kubernetes mode with a warm decision cache (one token, one action: every
 * call after the first is a cache hit), and with the cache off (every call a TokenReview and a
 * SubjectAccessReview over HTTP to the embedded apiserver, as a first request or an expired
 * decision pays). Interleaved, so a busy machine skews every mode alike. The added latency is a
 * mode's p50 minus token mode's.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster } from '../cluster/index.ts';
import { reviewerGrantYaml } from '../cluster/review-grant.ts';
import { createApp } from '../lib/http/app.ts';
import { authFromEnv } from '../lib/http/auth.ts';
import { createLogger } from '../lib/log.ts';
import { numberArg } from './support.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const N = numberArg(argv, '--n', 300);
const TOKEN = 'bench-token-0123456789';

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]!;

const dir = mkdtempSync(join(tmpdir(), 'felis-auth-bench-'));
const cluster = await startCluster({ dataDir: dir, rbacManifest: join(root, 'knative/rbac.yaml') });
try {
  await cluster.applyRbac(
    readFileSync(join(root, 'knative/examples/roles.yaml'), 'utf8') +
      '---\n' +
      reviewerGrantYaml() +
      `---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: bench-viewer, namespace: minecraft }
subjects: [{ kind: User, apiGroup: rbac.authorization.k8s.io, name: bench }]
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: felis-world-viewer }
`,
  );
  const userToken = cluster.tokenForUser('bench', [], ['felis-world']);
  const kc = cluster.kubeConfig(cluster.tokenFor('minecraft', 'felis-world'));
  const logger = createLogger('bench', { LOG_LEVEL: 'silent' });
  const route = (app: Parameters<Parameters<typeof createApp>[1]>[0]) => {
    app.get('/api/v1/servers/:name/holder', (c) => c.json({ held: false }));
  };
  const modes = {
    token: { app: createApp({ logger, auth: authFromEnv({ FELIS_TOKEN: TOKEN }, kc, logger) }, route), token: TOKEN },
    warm: { app: createApp({ logger, auth: authFromEnv({ FELIS_AUTH_MODE: 'kubernetes' }, kc, logger) }, route), token: userToken },
    cold: {
      app: createApp({ logger, auth: authFromEnv({ FELIS_AUTH_MODE: 'kubernetes', FELIS_AUTH_ALLOW_TTL_SECONDS: '0', FELIS_AUTH_DENY_TTL_SECONDS: '0' }, kc, logger) }, route),
      token: userToken,
    },
  };
  const times: Record<keyof typeof modes, number[]> = { token: [], warm: [], cold: [] };
  const once = async (m: keyof typeof modes) => {
    const t0 = performance.now();
    const r = await modes[m].app.request('/api/v1/servers/survival/holder', { headers: { authorization: `Bearer ${modes[m].token}` } });
    await r.text();
    if (r.status !== 200) throw new Error(`${m}: HTTP ${r.status}`);
    return performance.now() - t0;
  };
  // Warm-up: the client-node load and the first connection are a cold start's, not auth's.
  for (const m of Object.keys(modes) as Array<keyof typeof modes>) for (let i = 0; i < 20; i++) await once(m);
  for (let i = 0; i < N; i++) for (const m of Object.keys(modes) as Array<keyof typeof modes>) times[m].push(await once(m));
  const base = p50(times.token);
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  const out = {
    auth_added_ms_p50_warm: r3(p50(times.warm) - base),
    auth_added_ms_p50_cold: r3(p50(times.cold) - base),
    auth_token_mode_ms_p50: r3(base),
    auth_cold_ms_p99: r3(p99(times.cold)),
  };
  if (asJson) console.log(JSON.stringify(out));
  else {
    console.log(`auth bench, ${N} requests per mode (p50 / p99 ms):`);
    for (const m of Object.keys(times) as Array<keyof typeof modes>) console.log(`  ${m.padEnd(6)} ${p50(times[m]).toFixed(3)} / ${p99(times[m]).toFixed(3)}`);
    console.log(`  added by kubernetes mode: warm ${out.auth_added_ms_p50_warm} ms, cold ${out.auth_added_ms_p50_cold} ms`);
  }
} finally {
  await cluster.close();
  rmSync(dir, { recursive: true, force: true });
}

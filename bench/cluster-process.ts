/**
 * The embedded cluster in a process of its own, for the benchmark: in production the runner and
 * the API server/kubelet do not share an event loop, and the measurement should not either.
 * Prints one JSON line `{url, control, adminToken, functionToken}`, then serves a small control API
 * on loopback: POST /timing {opId, unscheduledMs, creatingMs}, GET /record?op=, POST /reset,
 * GET /counts?user=. Stops on SIGTERM or when stdin closes.
 */
import { createServer } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster } from '../cluster/index.ts';
import { LABEL_FILES_OP } from '../lib/labels.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: cluster-process.ts <dataDir>');

const timing = new Map<string, { unscheduledMs: number; creatingMs: number }>();
const cluster = await startCluster({
  dataDir,
  rbacManifest: join(root, 'knative/rbac.yaml'),
  podTiming: (pod) => timing.get(pod.metadata?.labels?.[LABEL_FILES_OP] ?? '') ?? { unscheduledMs: 0, creatingMs: 0 },
});
// Records are on this process's performance clock; the benchmark needs wall-clock epoch ms.
const epoch = (t: number | undefined) => (t === undefined ? undefined : performance.timeOrigin + t);

const control = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  let body = '';
  for await (const c of req) body += c;
  const reply = (v: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(v ?? null));
  };
  if (req.method === 'POST' && url.pathname === '/timing') {
    const t = JSON.parse(body) as { opId: string; unscheduledMs: number; creatingMs: number };
    timing.set(t.opId, t);
    return reply({});
  }
  if (url.pathname === '/record') {
    const r = cluster.podRecord(url.searchParams.get('op') ?? '');
    return reply(r && { jobCreated: epoch(r.jobCreated), started: epoch(r.started), exited: epoch(r.exited) });
  }
  if (url.pathname === '/reset') return reply((cluster.resetCounts(), {}));
  if (url.pathname === '/counts') return reply(cluster.counts(url.searchParams.get('user') ?? undefined));
  res.writeHead(404).end();
});
await new Promise<void>((r) => control.listen(0, '127.0.0.1', r));
const port = (control.address() as { port: number }).port;

const stop = async () => {
  control.close();
  await cluster.close();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
console.log(
  JSON.stringify({
    url: cluster.url,
    caPem: cluster.caPem,
    control: `http://127.0.0.1:${port}`,
    adminToken: cluster.adminToken,
    functionToken: cluster.tokenFor('minecraft', 'felis-world'),
  }),
);

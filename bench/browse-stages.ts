/**
 * Where a warm browse read's time goes, for `bench/browse.bench.ts --stages`: the files-read route
 * built as a function bundle builds it (same configuration readers, same dependencies), run in this
 * process with `app.request`, its Kubernetes reads and its call to the browse Pod timed one by one.
 * The embedded cluster shares this event loop, so the figures are for comparing stages and
 * revisions, not an end-to-end latency.
 * @module
 */

import { filesRead } from '../functions/files-read/app.ts';
import { callSession } from '../lib/browse/call.ts';
import { BrowseSessions } from '../lib/browse/sessions.ts';
import { configFromEnv } from '../lib/config.ts';
import { createApp } from '../lib/http/app.ts';
import { buildDeps } from '../lib/http/deps.ts';
import { loadKubeConfig } from '../lib/kube/config.ts';
import { KubeJobPodApi } from '../lib/kube/job-pods.ts';
import { createLogger } from '../lib/log.ts';
import { median } from './support.ts';

const PATH = '/api/v1/servers/survival/file?path=server.properties';

/** Replaces `obj[method]` with a version that records how long each call took under `stage`. */
function timed<O extends object>(obj: O, method: keyof O & string, stage: string, record: (stage: string, ms: number) => void): void {
  const original = (obj[method] as (...a: unknown[]) => Promise<unknown>).bind(obj);
  (obj as Record<string, unknown>)[method] = async (...args: unknown[]) => {
    const t = performance.now();
    try {
      return await original(...args);
    } finally {
      record(stage, performance.now() - t);
    }
  };
}

export async function warmReadStages(o: { kubeconfig: string; keyFile: string; token: string; runs: number }): Promise<Record<string, number>> {
  const env: NodeJS.ProcessEnv = { KUBECONFIG: o.kubeconfig, FELIS_TOKEN: o.token, FELIS_IMAGE: 'felis-world/files:dev', FELIS_JOB_KEY_FILE: o.keyFile };
  const cfg = configFromEnv(env);
  const logger = createLogger('browse-stages', { ...env, LOG_LEVEL: 'silent' });
  // client-node's loadFromDefault reads KUBECONFIG from the process environment.
  const saved = process.env.KUBECONFIG;
  process.env.KUBECONFIG = o.kubeconfig;
  const kc = loadKubeConfig(env);
  if (saved === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = saved;
  const deps = buildDeps(kc, { ...cfg, logger });
  const times: Record<string, number[]> = {};
  const record = (stage: string, ms: number) => void (times[stage] ??= []).push(ms);
  timed(deps.servers, 'getServer', 'kube: get server', record);
  timed(deps.servers, 'getClaim', 'kube: get world claim', record);
  timed(deps.gates, 'enter', 'entry gates (both reads)', record);
  const pods = new KubeJobPodApi(kc);
  timed(pods, 'listPods', 'kube: list browse pods', record);
  deps.browse = new BrowseSessions(pods, cfg.editor!, cfg.browse!, {
    logger,
    call: async (c) => {
      const t = performance.now();
      try {
        return await callSession(c);
      } finally {
        record('call to the browse pod', performance.now() - t);
      }
    },
  });
  const app = createApp({ logger, token: () => o.token }, filesRead(deps));
  const read = async () => {
    const t = performance.now();
    const res = await app.request(PATH, { headers: { authorization: `Bearer ${o.token}` } });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`stages read: ${res.status} ${body}`);
    return performance.now() - t;
  };
  // Until the session answers (this instance has no hint yet), then measure.
  for (let i = 0; i < 100 && (await read()) > 100; i++) await new Promise((r) => setTimeout(r, 50));
  await read();
  for (const k of Object.keys(times)) delete times[k];
  const total: number[] = [];
  for (let i = 0; i < o.runs; i++) total.push(await read());
  const out: Record<string, number> = { 'whole request': Math.round(median(total) * 100) / 100 };
  // A stage that did not happen on every read says how often it did.
  for (const [k, v] of Object.entries(times)) out[v.length === o.runs ? k : `${k} (${v.length} of ${o.runs} reads)`] = Math.round(median(v) * 100) / 100;
  return out;
}

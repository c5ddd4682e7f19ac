/**
 * The two runners the benchmark compares ours with, over the same JobPodApi:
 * - seed: the original K8sRunner (shared/seeds/k8sjobs.go.txt) — list Pods every 500 ms until the
 *   Pod is terminal, then read the whole log;
 * - felis150: the newer Felis runner — list every 150 ms, and as soon as the container runs (for a
 *   read) follow the log.
 * Benchmark-only code: the product uses lib/runner/sync-runner.ts.
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { JobPodApi } from '../lib/kube/job-pods.ts';
import { FILES_CONTAINER, LABEL_FILES_OP } from '../lib/labels.ts';
import { MAX_LOG_BYTES, ResultLineScanner } from '../lib/protocol/result.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const terminal = (p: V1Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
const running = (p: V1Pod) => {
  const cs = p.status?.containerStatuses?.find((c) => c.name === FILES_CONTAINER);
  return Boolean(cs?.state?.running || cs?.state?.terminated);
};

async function readResult(api: JobPodApi, ns: string, pod: string, follow: boolean): Promise<string> {
  const o = await api.openLog(ns, pod, FILES_CONTAINER, { follow, limitBytes: MAX_LOG_BYTES });
  if (o.kind !== 'stream') throw new Error(`log not readable: ${o.kind}`);
  const s = new ResultLineScanner();
  try {
    for await (const chunk of o.body) if (s.push(chunk) !== undefined) break;
    const p = s.end();
    if (p === undefined) throw new Error('no result');
    return p;
  } finally {
    o.close();
  }
}

export type Strategy = (api: JobPodApi, job: V1Job, mutating: boolean) => Promise<string>;

export const seedStrategy: Strategy = async (api, job) => {
  const ns = job.metadata!.namespace!;
  await api.createJob(ns, job);
  const sel = `${LABEL_FILES_OP}=${job.metadata!.labels![LABEL_FILES_OP]}`;
  for (;;) {
    const pod = (await api.listPods(ns, sel)).find(terminal);
    if (pod) return readResult(api, ns, pod.metadata!.name!, false);
    await sleep(500);
  }
};

export const felis150Strategy: Strategy = async (api, job, mutating) => {
  const ns = job.metadata!.namespace!;
  await api.createJob(ns, job);
  const sel = `${LABEL_FILES_OP}=${job.metadata!.labels![LABEL_FILES_OP]}`;
  for (;;) {
    const pods = await api.listPods(ns, sel);
    const pod = pods.find((p) => terminal(p) || (!mutating && running(p)));
    if (pod) return readResult(api, ns, pod.metadata!.name!, true);
    await sleep(150);
  }
};

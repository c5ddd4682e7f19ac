/**
 * Route tests of the background routes (unzip, zip, compress, pull): the route kit with an editor
 * whose starts are scripted and recorded with whether the world lock was held, or the real editor
 * over Jobs kept in memory, and CloudEvent deliveries to the app. Each test file then says only
 * what its route does differently.
 * @module
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { configFromEnv } from '../config.ts';
import { FilesEditor, type StreamedWrites } from '../files/editor.ts';
import type { RouteModule } from '../http/serve.ts';
import type { ServerApi } from '../kube/servers.ts';
import type { BackgroundApi, StartRequest } from '../ops/background.ts';
import { SyncRunner } from '../runner/sync-runner.ts';
import { matches } from './fake-servers.ts';
import { FakeGates, type RouteKit, routeKit, TOKEN } from './route-kit.ts';

/** The route kit with a scripted background editor: `starts` holds each start and whether the lock was held. */
export function backgroundKit(routes: RouteModule, opts: { start: (req: StartRequest) => unknown; earlier?: unknown }): RouteKit & { starts: Array<{ req: StartRequest; locked: boolean }> } {
  const gates = new FakeGates();
  const starts: Array<{ req: StartRequest; locked: boolean }> = [];
  const editor = {
    async earlierOp() {
      return opts.earlier;
    },
    async start(_t: unknown, req: StartRequest) {
      starts.push({ req, locked: gates.holding });
      return opts.start(req);
    },
    async serverNotStopped() {},
  } as unknown as FilesEditor;
  return { ...routeKit(routes, { gates, editor }), starts };
}

/** Jobs (and their Pods) in memory: the real editor renders, creates and finds them by label. */
export class MemoryJobs implements BackgroundApi {
  jobs: V1Job[] = [];
  pods: V1Pod[] = [];
  async createJob(_ns: string, job: V1Job) {
    const created = { ...job, metadata: { ...job.metadata, creationTimestamp: new Date('2026-12-01T06:30:00Z') } };
    this.jobs.push(created);
    return created;
  }
  async listJobs(_ns: string, sel: string) {
    return this.jobs.filter((j) => matches(sel, j.metadata?.labels));
  }
  async listPods(_ns: string, sel: string): Promise<V1Pod[]> {
    return this.pods.filter((p) => matches(sel, p.metadata?.labels));
  }
  async openLog() {
    return { kind: 'gone' as const };
  }
}

/** The route kit with the real editor over {@link MemoryJobs}, configured by `env` beside the image. */
export function realEditorKit(routes: RouteModule, opts: { env?: Record<string, string>; streamed?: (jobs: MemoryJobs) => StreamedWrites; servers?: ServerApi } = {}): RouteKit & { jobs: MemoryJobs } {
  const jobs = new MemoryJobs();
  const cfg = configFromEnv({ FELIS_IMAGE: 'felis/files:test', ...opts.env }).editor!;
  const editor = new FilesEditor(cfg, new SyncRunner(jobs), jobs, opts.streamed?.(jobs));
  return { ...routeKit(routes, { gates: new FakeGates(), editor, ...(opts.servers ? { servers: opts.servers } : {}) }), jobs };
}

/** Delivers CloudEvents of `type` to the kit's app (binary mode, the test token), answering status and JSON body. */
export function deliverer(k: Pick<RouteKit, 'app'>, type: string): (id: string, data: object) => Promise<{ status: number; body: any }> {
  return async (id, data) => {
    const res = await k.app.request('/', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-id': id, 'ce-source': '/tests/background', 'ce-type': type },
      body: JSON.stringify(data),
    });
    return { status: res.status, body: JSON.parse(await res.text()) };
  };
}

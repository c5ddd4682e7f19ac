/**
 * Fast route tests: one function's routes in the real app shell (request ids, auth, the error
 * handler), answering through `app.request()` with fake dependencies: a scripted editor, gates
 * that record what they were asked, and a world lock whose answers a test sets. Nothing here
 * loads the Kubernetes client.
 * @module
 */
import { Writable } from 'node:stream';
import type { Hono } from 'hono';
import { pino } from 'pino';
import { actorMixin } from '../actor.ts';
import type { FilesEditor } from '../files/editor.ts';
import type { FileAccess, FileGates, RunOptions } from '../files/gates.ts';
import { createApp, type Env } from '../http/app.ts';
import type { ApiAuth } from '../http/auth.ts';
import type { Deps } from '../http/deps.ts';
import type { RouteModule } from '../http/serve.ts';
import type { Target } from '../job-spec/types.ts';
import type { ServerApi } from '../kube/servers.ts';
import type { Logger } from '../log.ts';
import { MaintenanceGates } from '../maintenance/file-gates.ts';
import type { PullPlacer } from '../maintenance/pull-placement.ts';
import type { Settler } from '../maintenance/settle.ts';
import type { WorldLock } from '../maintenance/world-lock.ts';
import { WorldLock as RealWorldLock } from '../maintenance/world-lock.ts';
import { FakeServerApi } from './fake-servers.ts';
import { type FelisServerShape, felisServer } from './felis-fixtures.ts';
import { jsonCall } from './json-call.ts';

export const TOKEN = 'route-test-token';

/** Gates that admit or refuse as told, and remember every entry and every locked run. */
export class FakeGates implements FileGates {
  entered: Array<{ server: string; access: FileAccess }> = [];
  ran: Array<{ server: string; access: FileAccess }> = [];
  /** Thrown by enter / by run before `fn`, when set. */
  enterError: Error | undefined;
  runError: Error | undefined;
  /** True while a run's `fn` is running: the editor checks it was called under the lock. */
  holding = false;

  async enter(server: string, access: FileAccess): Promise<Target> {
    this.entered.push({ server, access });
    if (this.enterError) throw this.enterError;
    return { server, world: { claim: `world-${server}-0` } };
  }

  /** The options of each locked run that had any (a caller's `Prefer: wait`). */
  runOptions: RunOptions[] = [];

  async run<T>(server: string, access: FileAccess, fn: () => Promise<T>, opts?: RunOptions): Promise<T> {
    this.ran.push({ server, access });
    // The wait options a route passed (`entered` only says which entry the call came through; every
    // call passes its caller's signal, which ends a wait for its turn).
    const { entered: _entered, ...wait } = opts ?? {};
    if (wait.waitMs !== undefined) this.runOptions.push(wait);
    if (this.runError) throw this.runError;
    opts?.applied?.();
    this.holding = true;
    try {
      return await fn();
    } finally {
      this.holding = false;
    }
  }
}

type EditorMethod = 'list' | 'run' | 'read' | 'write' | 'mkdir' | 'delete' | 'rename' | 'search' | 'searchContent' | 'batch' | 'trashList' | 'trashRestore' | 'trashPurge' | 'follow';

/** An editor whose answers a test scripts; every call is recorded with whether the lock was held. */
export function fakeEditor(gates: FakeGates, answers: Partial<Record<EditorMethod, (...args: unknown[]) => unknown>> = {}) {
  const calls: Array<{ method: EditorMethod; args: unknown[]; locked: boolean }> = [];
  /** The servers a gate found not stopped, whose edit sessions the editor was told to end. */
  const ended: string[] = [];
  const method =
    (m: EditorMethod) =>
    async (...args: unknown[]) => {
      calls.push({ method: m, args, locked: gates.holding });
      const a = answers[m];
      return a ? a(...args) : undefined;
    };
  const editor = {
    list: method('list'),
    run: method('run'),
    read: method('read'),
    write: method('write'),
    mkdir: method('mkdir'),
    delete: method('delete'),
    rename: method('rename'),
    search: method('search'),
    searchContent: method('searchContent'),
    batch: method('batch'),
    trashList: method('trashList'),
    trashRestore: method('trashRestore'),
    trashPurge: method('trashPurge'),
    follow: method('follow'),
    serverNotStopped: async (server: string) => void ended.push(server),
  } as unknown as FilesEditor;
  return { editor, calls, ended };
}

export interface RouteKit {
  app: Hono<Env>;
  deps: Deps;
  gates: FakeGates;
  logs: string[];
  /** Audit lines, parsed. */
  audits(): Array<Record<string, unknown>>;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; text: string; headers: Headers }>;
}

export function routeKit(
  routes: RouteModule,
  over: { editor?: FilesEditor | null; gates?: FakeGates; lock?: Partial<WorldLock>; servers?: ServerApi; auth?: (logger: Logger) => ApiAuth; corsOrigins?: string[] } = {},
): RouteKit {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _e, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const logger = pino({ level: 'info', mixin: actorMixin }, sink);
  const gates = over.gates ?? new FakeGates();
  const deps: Deps = {
    logger,
    editor: over.editor === null ? undefined : (over.editor ?? fakeEditor(gates).editor),
    gates,
    servers: over.servers ?? ({} as ServerApi),
    lock: { namespace: 'minecraft', ...over.lock } as WorldLock,
    settler: {} as Settler,
    placer: { placeOnce: async () => [] } as unknown as PullPlacer,
  };
  const app = createApp({ logger, token: () => TOKEN, auth: over.auth?.(logger), corsOrigins: over.corsOrigins }, routes(deps));
  return {
    app,
    deps,
    gates,
    logs,
    audits: () => logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.audit === true),
    call(method, path, body, headers) {
      return jsonCall((p, init) => app.request(p, init), TOKEN, method, path, body, headers);
    },
  };
}

/** The envelope every refusal carries: code, message, and the request id echoed in X-Request-Id. */
export function envelopeOf(r: { status: number; body: any; text: string; headers: Headers }): { code: string; message: string } {
  const e = r.body?.error;
  if (!e || typeof e.code !== 'string' || typeof e.message !== 'string') throw new Error(`not an error envelope: ${r.status} ${r.text}`);
  if (r.headers.get('content-type') !== 'application/json; charset=utf-8') throw new Error(`wrong content type ${r.headers.get('content-type')}`);
  if (!r.text.endsWith('}\n')) throw new Error('the envelope is not newline-terminated');
  if (!e.request_id || e.request_id !== r.headers.get('x-request-id')) throw new Error(`request_id ${e.request_id} is not the X-Request-Id ${r.headers.get('x-request-id')}`);
  return { code: e.code, message: e.message };
}

/** A server that runs, as Felis's operator leaves it, on node `node-b`. */
export const RUNNING_SERVER: FelisServerShape = { desiredState: 'Running', phase: 'Running', ready: true, statusNodeName: 'node-b' };

/**
 * The real gates (lib/maintenance/file-gates.ts) over a fake cluster holding the server `survival`
 * in `shape` and its world claim (ReadWriteOnce unless `modes` says otherwise): for a route test of
 * what a server's state lets through. Put them in a kit's `deps.gates`.
 */
export function realGates(shape: FelisServerShape, o: { modes?: string[]; readWhileRunning?: boolean } = {}): { api: FakeServerApi; gates: MaintenanceGates } {
  const api = new FakeServerApi();
  api.put(felisServer('survival', shape));
  api.claims.add('world-survival-0');
  if (o.modes) api.claimModes.set('world-survival-0', o.modes);
  const lock = new RealWorldLock(api, { namespace: 'minecraft' });
  return { api, gates: new MaintenanceGates(api, lock, o.readWhileRunning === undefined ? {} : { readWhileRunning: o.readWhileRunning }) };
}

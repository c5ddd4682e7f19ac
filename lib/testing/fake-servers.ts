/**
 * An in-memory ServerApi for unit and route tests: MinecraftServers with resourceVersions and JSON
 * merge patches that answer 409 Conflict to a stale resourceVersion, exactly as the apiserver's
 * error reaches client-node (an ApiException with a Status body), and label-selected Jobs and Pods.
 * The Kubernetes client is loaded only when an error is thrown, so route tests start fast.
 * @module
 */
import type { ApiException, V1Job, V1Pod } from '@kubernetes/client-node';
import type { MinecraftServer, ServerApi, WorldClaim } from '../kube/servers.ts';

type Json = Record<string, unknown>;

function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Json = target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Json) } : {};
  for (const [k, v] of Object.entries(patch as Json)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** `k=v` and `k` terms, comma-separated: the selectors this project sends. */
export function matches(selector: string, labels: Record<string, string> | undefined): boolean {
  return selector
    .split(',')
    .filter(Boolean)
    .every((term) => {
      const i = term.indexOf('=');
      return i < 0 ? labels?.[term] !== undefined : labels?.[term.slice(0, i)] === term.slice(i + 1);
    });
}

export async function apiError(code: number, reason: string, message: string): Promise<ApiException<string>> {
  const { ApiException } = await import('@kubernetes/client-node');
  return new ApiException(code, `HTTP-Code: ${code}`, JSON.stringify({ kind: 'Status', status: 'Failure', code, reason, message }), {});
}

export class FakeServerApi implements ServerApi {
  readonly servers = new Map<string, MinecraftServer>();
  jobs: V1Job[] = [];
  pods: V1Pod[] = [];
  readonly claims = new Set<string>();
  /** A claim's access modes, when a test gives it any other than ReadWriteOnce. */
  readonly claimModes = new Map<string, string[]>();
  /** Every call, as `verb name`, in order. */
  readonly calls: string[] = [];
  /** Runs before a server patch applies: a test plays a racing writer here. */
  beforePatch: ((name: string) => void) | undefined;
  #rv = 100;

  put(server: MinecraftServer): void {
    this.servers.set(server.metadata.name, { ...structuredClone(server), metadata: { ...structuredClone(server.metadata), resourceVersion: String(++this.#rv) } });
  }

  /** A write by someone else (the operator, Felis's API): bumps the resourceVersion. */
  write(name: string, patch: object): void {
    const cur = this.servers.get(name);
    if (!cur) throw new Error(`no server ${name}`);
    const next = mergePatch(cur, patch) as MinecraftServer;
    next.metadata.resourceVersion = String(++this.#rv);
    this.servers.set(name, next);
  }

  annotation(name: string, key: string): string | undefined {
    return this.servers.get(name)?.metadata.annotations?.[key];
  }

  async getServer(_ns: string, name: string): Promise<MinecraftServer | undefined> {
    this.calls.push(`get ${name}`);
    const s = this.servers.get(name);
    return s ? structuredClone(s) : undefined;
  }

  async listServers(): Promise<MinecraftServer[]> {
    this.calls.push('list servers');
    return [...this.servers.values()].map((s) => structuredClone(s));
  }

  async patchServer(_ns: string, name: string, patch: object): Promise<MinecraftServer> {
    this.calls.push(`patch ${name}`);
    this.beforePatch?.(name);
    const cur = this.servers.get(name);
    if (!cur) throw await apiError(404, 'NotFound', `minecraftservers.felis.lolicon.best "${name}" not found`);
    const rv = (patch as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
    if (rv !== undefined && rv !== cur.metadata.resourceVersion) {
      throw await apiError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on minecraftservers.felis.lolicon.best "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    this.write(name, patch);
    return structuredClone(this.servers.get(name)!);
  }

  async removeAnnotationIf(_ns: string, name: string, key: string, value: string): Promise<boolean> {
    this.calls.push(`patch ${name}`);
    this.beforePatch?.(name);
    const cur = this.servers.get(name);
    if (!cur || cur.metadata.annotations?.[key] !== value) return false;
    this.write(name, { metadata: { annotations: { [key]: null } } });
    return true;
  }

  async listJobs(_ns: string, selector: string): Promise<V1Job[]> {
    this.calls.push(`list jobs ${selector}`);
    return this.jobs.filter((j) => matches(selector, j.metadata?.labels)).map((j) => structuredClone(j));
  }

  async listPods(_ns: string, selector: string): Promise<V1Pod[]> {
    this.calls.push(`list pods ${selector}`);
    return this.pods.filter((p) => matches(selector, p.metadata?.labels)).map((p) => structuredClone(p));
  }

  async getClaim(_ns: string, claim: string): Promise<WorldClaim | undefined> {
    this.calls.push(`get pvc ${claim}`);
    return this.claims.has(claim) ? { accessModes: [...(this.claimModes.get(claim) ?? ['ReadWriteOnce'])] } : undefined;
  }

  async patchJob(_ns: string, name: string, patch: object): Promise<void> {
    this.calls.push(`patch job ${name}`);
    const i = this.jobs.findIndex((j) => j.metadata?.name === name);
    if (i < 0) throw await apiError(404, 'NotFound', `jobs.batch "${name}" not found`);
    this.jobs[i] = mergePatch(this.jobs[i], patch) as V1Job;
  }

  async createJob(_ns: string, job: V1Job): Promise<V1Job> {
    this.calls.push(`create job ${job.metadata?.name}`);
    if (this.jobs.some((j) => j.metadata?.name === job.metadata?.name)) throw await apiError(409, 'AlreadyExists', `jobs.batch "${job.metadata?.name}" already exists`);
    this.jobs.push(structuredClone(job));
    return job;
  }
}

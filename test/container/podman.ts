/**
 * The container tier's runtime: podman (with runc, cgroup v1's memory controller) driven from a
 * Pod's spec, the way a kubelet drives containerd. `npm run test:container` (scripts/test-container.sh)
 * builds the image and hands the tests its podman command line and image name in the environment.
 *
 * - `podRun` turns one container of a Pod into `podman run` arguments: the image's entrypoint
 *   replaced by `command` as Kubernetes does, the securityContext (user, group, read-only root,
 *   capabilities, no privilege escalation), the limits, each volume mounted at its path (a world
 *   claim's folder read-only where the mount is), the environment with its downward-API fields.
 * - `containerProgram` plugs that into the embedded kubelet, so a stack's Job Pods run in real
 *   containers from the image; every run is kept in `runs` with what its cgroup counted.
 *
 * Each container is a child of a cgroup of its own (`--cgroup-parent`), the Pod's cgroup as a
 * kubelet makes one; the limit is on the container's cgroup, as `--memory` puts it. That cgroup goes
 * with the container, so its counters (peak usage, resident memory, the kernel's OOM kills) are
 * read while it runs, every few ms.
 *
 * @module
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { ProgramContext, ProgramFn, ProgramMapping } from '../../cluster/kubelet/index.ts';

const run = promisify(execFile);

/** podman and its global flags (the tier's own storage), as the tier script gives them. */
export const PODMAN: string[] = JSON.parse(process.env.FELIS_PODMAN ?? '["podman"]') as string[];
/** The image the tier built from the Dockerfile. */
export const IMAGE = process.env.FELIS_CONTAINER_IMAGE ?? 'localhost/felis-world:container-test';
/** Every container the tier starts carries it, so the tier can find (and remove) what is left. */
export const TEST_LABEL = 'felis-container-test=1';
/** Where this machine mounts cgroup v1's memory controller. */
const MEMORY_CGROUPS = '/sys/fs/cgroup/memory';

/**
 * The sandbox this runs in allows fewer open files and processes than podman's default (1,048,576),
 * and runc's setrlimit fails above it: the limits are given explicitly.
 */
const ULIMITS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];

export function podman(args: string[], input?: string): string {
  return execFileSync(PODMAN[0]!, [...PODMAN.slice(1), ...args], { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
}

export async function podmanAsync(args: string[]): Promise<string> {
  return (await run(PODMAN[0]!, [...PODMAN.slice(1), ...args], { encoding: 'utf8', maxBuffer: 64 << 20 })).stdout;
}

/** Kubernetes quantities as bytes (memory) and CPUs (cpu). */
export function bytesOf(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q);
  if (!m) throw new Error(`not a memory quantity: ${q}`);
  const unit = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2] ?? ''] ?? 1;
  return Math.round(Number(m[1]) * unit);
}

export function cpusOf(q: string): number {
  return q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q);
}

/** The securityContext of a container over its Pod's, as `podman run` flags. */
export function securityFlags(pod: V1Pod['spec'], c: V1Container): string[] {
  const podSc = pod?.securityContext ?? {};
  const sc = c.securityContext ?? {};
  const uid = sc.runAsUser ?? podSc.runAsUser;
  const gid = sc.runAsGroup ?? podSc.runAsGroup;
  const flags: string[] = [];
  if (uid !== undefined) flags.push('--user', gid !== undefined ? `${uid}:${gid}` : String(uid));
  if ((sc.runAsNonRoot ?? podSc.runAsNonRoot) && uid === 0) throw new Error('runAsNonRoot with runAsUser 0: the kubelet would refuse to start it');
  // Read-only means read-only: podman would otherwise add its own tmpfs at /tmp, /var/tmp and /run.
  if (sc.readOnlyRootFilesystem) flags.push('--read-only', '--read-only-tmpfs=false');
  for (const cap of sc.capabilities?.drop ?? []) flags.push('--cap-drop', cap);
  for (const cap of sc.capabilities?.add ?? []) flags.push('--cap-add', cap);
  if (sc.allowPrivilegeEscalation === false) flags.push('--security-opt', 'no-new-privileges');
  if (sc.privileged) throw new Error('a privileged container: nothing of ours asks for one');
  return flags;
}

export function limitFlags(c: V1Container): string[] {
  const limits = (c.resources?.limits ?? {}) as Record<string, string>;
  const flags: string[] = [];
  if (limits.memory) flags.push('--memory', String(bytesOf(limits.memory)), '--memory-swap', String(bytesOf(limits.memory)));
  if (limits.cpu) flags.push('--cpus', String(cpusOf(limits.cpu)));
  return flags;
}

/** What one container run counted, from its cgroups. */
export interface ContainerRun {
  name: string;
  pod: string;
  command: string[];
  args: string[];
  /** The memory limit the container ran under (bytes), if any. */
  limitBytes?: number;
  /**
   * Peak memory of the container's own cgroup, as last read while it ran. Under cgroup v1 this
   * counts the page cache the container's writes made, which the kernel reclaims at the limit, so
   * an op that writes much reaches its limit here without being short of memory.
   */
  peakBytes: number;
  /** The highest resident anonymous memory (`total_rss` of `memory.stat`) seen while it ran, sampled. */
  peakRssBytes: number;
  /** The container cgroup's `oom_kill` count, as last read while it ran. */
  oomKills: number;
  exitCode?: number;
  /** What the program changed in the image's root (`podman diff` after its exit, less the runtime's own). */
  diff?: string[];
  /** Resolves once the exit is recorded and the container removed. */
  done: Promise<void>;
}

/** Watches a container's cgroup (under its Pod cgroup `parent`) until stopped. */
function watchCgroup(parentRel: string, r: ContainerRun): () => void {
  const parent = join(MEMORY_CGROUPS, parentRel);
  let child: string | undefined;
  const read = () => {
    try {
      child ??= readdirSync(parent).find((d) => d.startsWith('libpod-'));
      if (!child) return;
      const dir = join(parent, child);
      const peak = Number(readFileSync(join(dir, 'memory.max_usage_in_bytes'), 'utf8'));
      if (peak > r.peakBytes) r.peakBytes = peak;
      const rss = Number(/^total_rss (\d+)$/m.exec(readFileSync(join(dir, 'memory.stat'), 'utf8'))?.[1] ?? 0);
      if (rss > r.peakRssBytes) r.peakRssBytes = rss;
      const kills = Number(/oom_kill (\d+)/.exec(readFileSync(join(dir, 'memory.oom_control'), 'utf8'))?.[1] ?? 0);
      if (kills > r.oomKills) r.oomKills = kills;
    } catch {
      // Not there yet, or already gone with the container.
    }
  };
  const timer = setInterval(read, 4);
  return () => {
    clearInterval(timer);
    read();
  };
}

/** Removes a Pod cgroup once nothing is in it (podman leaves an empty `conmon` child). */
function removePodCgroup(parentRel: string): void {
  const dir = join(MEMORY_CGROUPS, parentRel);
  for (let i = 0; i < 50; i++) {
    try {
      for (const d of readdirSync(dir, { withFileTypes: true })) if (d.isDirectory()) rmdirSync(join(dir, d.name));
      rmdirSync(dir);
      return;
    } catch {
      execFileSync('sleep', ['0.1']);
    }
  }
}

export interface PodRunOptions {
  /** The Pod's environment and volumes (the kubelet's view), or given directly. */
  ctx: ProgramContext;
  /** Loopback networking for a Pod that serves (it listens on its Pod address); none otherwise. */
  network: 'host' | 'none';
}

/** `podman run` arguments for one container of a Pod (without the podman command itself). */
export function podRunArgs(name: string, parentRel: string, pod: V1Pod['spec'], c: V1Container, o: PodRunOptions): string[] {
  const args = ['run', '--name', name, '--label', TEST_LABEL, '--network', o.network, '--cgroup-parent', `/${parentRel}`, ...ULIMITS];
  args.push(...securityFlags(pod, c), ...limitFlags(c));
  for (const m of o.ctx.mounts) {
    // An emptyDir is a folder of the node's, world-writable as the kubelet makes it.
    if ((pod?.volumes ?? []).some((v) => v.emptyDir && (c.volumeMounts ?? []).some((vm) => vm.name === v.name && vm.mountPath.replace(/\/+$/, '') === m.path))) chmodSync(m.dir, 0o777);
    args.push('-v', `${m.dir}:${m.path}${m.readOnly ? ':ro' : ''}`);
  }
  for (const [k, v] of Object.entries(o.ctx.env)) args.push('-e', `${k}=${v}`);
  if (c.workingDir) args.push('--workdir', c.workingDir);
  // Kubernetes' command replaces the image's entrypoint, its args the image's command.
  if (c.command?.length) args.push('--entrypoint', JSON.stringify(c.command));
  args.push(IMAGE, ...(c.args ?? []));
  return args;
}

/**
 * `podman diff` less what the runtime itself puts in a container's root before the program starts:
 * the mount points of its volumes (and the folders above them) and /etc's network files. What is
 * left was written by the program.
 */
export function programWrites(diff: string[], mountPaths: string[]): string[] {
  const made = new Set(['/etc', '/etc/hosts', '/etc/hostname', '/etc/resolv.conf']);
  for (const m of mountPaths) {
    // /var/run is a link to /run in the image: the runtime makes the mount point under /run.
    for (let p = m.replace(/^\/var\/run(?=\/|$)/, '/run'); p !== '/' && p !== '.'; p = dirname(p)) made.add(p);
  }
  return diff.filter((l) => !(/^[AC] /.test(l) && made.has(l.slice(2))));
}

/** Every container run so far (the tests read what the cgroups counted). */
export const runs: ContainerRun[] = [];

/**
 * A kubelet program that runs every container of the image's file Jobs (`/usr/local/bin/felis`) in
 * a real container; anything else (another tool's Job in a test) keeps running as a process.
 */
export function containerProgram(): ProgramFn {
  return (container, pod, ctx): ProgramMapping | undefined => {
    if (container.command?.[0] !== '/usr/local/bin/felis') return undefined;
    const name = `felis-ct-${randomBytes(5).toString('hex')}`;
    const parentRel = join('felis-container-test', name);
    mkdirSync(join(MEMORY_CGROUPS, parentRel), { recursive: true });
    const limit = (container.resources?.limits as Record<string, string> | undefined)?.memory;
    const serves = (container.ports ?? []).length > 0;
    const argv = podRunArgs(name, parentRel, pod.spec, container, { ctx, network: serves ? 'host' : 'none' });
    let finish!: () => void;
    const r: ContainerRun = {
      name,
      pod: pod.metadata?.name ?? '',
      command: container.command ?? [],
      args: container.args ?? [],
      ...(limit ? { limitBytes: bytesOf(limit) } : {}),
      peakBytes: 0,
      peakRssBytes: 0,
      oomKills: 0,
      done: new Promise<void>((res) => (finish = res)),
    };
    runs.push(r);
    const stopWatch = watchCgroup(parentRel, r);
    return {
      command: [...PODMAN, ...argv],
      verbatim: { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root' } },
      stop: (signal) => {
        // The container is conmon's, not in the killed process group: kill it by name.
        const p = spawn(PODMAN[0]!, [...PODMAN.slice(1), 'kill', '--signal', signal === 'SIGTERM' ? 'TERM' : 'KILL', name], { stdio: 'ignore', detached: true });
        p.on('error', () => undefined);
        p.unref();
      },
      reason: (code) => {
        stopWatch();
        r.exitCode = code;
        void (async () => {
          try {
            r.diff = programWrites(
              (await podmanAsync(['diff', name])).split('\n').filter(Boolean),
              ctx.mounts.map((m) => m.path),
            );
          } catch {
            r.diff = undefined;
          }
          await podmanAsync(['rm', '-f', name]).catch(() => undefined);
          removePodCgroup(parentRel);
          finish();
        })();
        // The kernel's OOM kill, as the container's own cgroup counted it.
        if (code === 137 && r.oomKills > 0) return 'OOMKilled';
        return undefined;
      },
    };
  };
}

/** Containers of this tier still present in its storage (running or not). */
export function leftContainers(): string[] {
  return podman(['ps', '-a', '--filter', `label=${TEST_LABEL}`, '--format', '{{.Names}}'])
    .split('\n')
    .filter(Boolean);
}

export function cgroupsAvailable(): boolean {
  return existsSync(join(MEMORY_CGROUPS, 'memory.max_usage_in_bytes'));
}

/** A function bundle serving from the image, in a container of its own. */
export interface FunctionContainer {
  name: string;
  url: string;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** Resolves once it logged that its routes and the Kubernetes client are loaded. */
  loaded(): Promise<void>;
  /** SIGTERM (as Knative stops an instance), then its exit code and what it changed in the image's root. */
  stop(): Promise<{ exitCode: number | null; diff: string[] }>;
}

/**
 * Starts one function's container as its Knative Service runs it: `podRunArgs` from the Service's
 * Pod spec and container, on the host's loopback (`--network host`: the embedded API and the Job
 * Pods' addresses are there). Ready when the function prints the JSON line naming its port.
 */
export async function startFunctionContainer(spec: V1Pod['spec'], c: V1Container, ctx: ProgramContext): Promise<FunctionContainer> {
  const name = `felis-fn-${randomBytes(5).toString('hex')}`;
  const parentRel = join('felis-container-test', name);
  mkdirSync(join(MEMORY_CGROUPS, parentRel), { recursive: true });
  const argv = podRunArgs(name, parentRel, spec, c, { ctx, network: 'host' });
  const child = spawn(PODMAN[0]!, [...PODMAN.slice(1), ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr!.on('data', (d) => (out += d));
  child.stdout!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${c.name}: no port line in 60 s: ${out}`)), 60_000);
    void exited.then((code) => reject(new Error(`${c.name} exited ${code} before it listened: ${out}`)));
    const look = () => {
      const m = /"port":(\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve(Number(m[1]));
    };
    child.stdout!.on('data', look);
  });
  const loaded = () =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${c.name}: routes not loaded in 30 s: ${out}`)), 30_000);
      const look = () => {
        if (!/"loaded_ms":/.test(out)) return false;
        clearTimeout(timer);
        resolve();
        return true;
      };
      if (!look()) child.stdout!.on('data', look);
    });
  const stop = async () => {
    await podmanAsync(['stop', '--time', '30', name]).catch(() => undefined);
    const exitCode = await exited;
    const diff = programWrites(
      (await podmanAsync(['diff', name])).split('\n').filter(Boolean),
      ctx.mounts.map((m) => m.path),
    );
    await podmanAsync(['rm', '-f', name]).catch(() => undefined);
    removePodCgroup(parentRel);
    return { exitCode, diff };
  };
  return { name, url: `http://127.0.0.1:${port}`, output: () => out, loaded, stop };
}

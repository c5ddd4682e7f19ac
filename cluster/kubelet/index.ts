/**
 * A one-node kubelet (and scheduler) that runs the containers of Job Pods as local processes.
 *
 * A Pod goes: unscheduled (no nodeName) for `unscheduledMs`, and as long as a claim it mounts does
 * not exist; bound to the node with container `waiting: ContainerCreating` for `creatingMs`; then
 * the process runs (`running`, phase Running); on exit `terminated {exitCode, reason}` and phase
 * Succeeded or Failed. Deleting the Pod kills the process (SIGKILL) and finishes the deletion.
 * `restartPolicy: OnFailure` restarts a failed container in place after a back-off.
 *
 * Volumes: a `persistentVolumeClaim` is a local directory; arguments and environment values equal
 * to a mountPath, or under it, are rewritten to that directory. Logs are kept per container and
 * served by `containerLogs`, the function behind the API server's `pods/log`.
 *
 * With `logFiles` (the persistent cluster), every container's log is also written to disk, and the
 * logs of Pods this kubelet did not run itself (they finished before a restart) are served from
 * there until their Pod is deleted (`log-files.ts`).
 *
 * With a `journal`, each started process is recorded (pid and start time) until its Pod's final
 * status is written, so that a restart after a crash can end what the crash left running
 * (`node-restart.ts`).
 *
 * @module
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { Faults } from '../faults.ts';
import type { Recorder } from '../records.ts';
import { rfc3339 } from '../registry.ts';
import type { KObject } from '../store.ts';
import type { ProcessJournal } from './journal.ts';
import type { PodLogDir, PodLogFiles } from './log-files.ts';
import { ContainerLog, type LogQuery, readLog } from './logs.ts';
import type { NodeApi } from './node-api.ts';
import { PodIpPool } from './pod-ips.ts';
import { killProcessGroup, processStartTicks } from './processes.ts';

type Any = any;
type Log = { info(...a: unknown[]): void; warn(...a: unknown[]): void };

export interface PodTiming {
  unscheduledMs: number;
  creatingMs: number;
}

/** What a container's program is started with: its environment as the Pod gives it, and its volumes as local folders. */
export interface ProgramContext {
  /** The container's environment, values and downward-API fields expanded, paths not rewritten. */
  env: Record<string, string>;
  /** Each volume mount: the path inside the container, the local folder behind it. */
  mounts: { path: string; dir: string; readOnly: boolean }[];
}

/** How to run a container: a command on this machine, or (verbatim) a container runtime's client. */
export interface ProgramMapping {
  command: string[];
  cwd?: string;
  /**
   * Run `command` as given, with only this environment: nothing is rewritten to the volumes' local
   * folders (a container runtime mounts them at their paths itself).
   */
  verbatim?: { env: Record<string, string> };
  /** Called when the kubelet kills the container: what the process group's kill does not reach (a runtime's container). */
  stop?: (signal: NodeJS.Signals) => void;
  /** The termination reason for an exit code, where the program knows better than the code (a kernel OOM kill). */
  reason?: (exitCode: number) => string | undefined;
}

export type ProgramFn = (container: V1Container, pod: V1Pod, ctx: ProgramContext) => ProgramMapping | undefined;

export interface KubeletOptions {
  dataDir: string;
  repoRoot: string;
  podTiming: (pod: V1Pod) => PodTiming;
  program?: ProgramFn;
  claimPath?: (claim: string, namespace: string) => string | undefined;
  faults: Faults;
  recorder: Recorder;
  logger: Log;
  /** Multiplies the container restart back-off (10 s doubling, at most 5 min). */
  backoffScale: number;
  maxLogBytes?: number;
  /** Where started processes are recorded (the persistent cluster); none in the tests' clusters. */
  journal?: ProcessJournal;
  /** Where container logs are kept on disk (the persistent cluster); in memory only without. */
  logFiles?: PodLogFiles;
  /**
   * On `close`, how long running Pod processes have between SIGTERM and SIGKILL, as a node's
   * graceful shutdown gives them: a Job that is placing files finishes or rolls back and prints its
   * result, which the log files keep. 0 (the tests' clusters): SIGKILL at once, as a node crash.
   */
  shutdownGraceMs?: number;
}

/** A kubelet-side log error: 400 and 404 come back to the API server as plain text. */
export type ContainerLogResult = { ok: true; stream: import('node:stream').Readable } | { ok: false; code: 400 | 404 | 500; message: string };

const FELIS_BINARY = '/usr/local/bin/felis';

class Aborted extends Error {}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Aborted());
    const t = setTimeout(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    const onAbort = () => {
      clearTimeout(t);
      reject(new Aborted());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A timer that does not keep the process alive (a bound on a wait, not work). */
function grace(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

function hasJobController(pod: KObject): boolean {
  return (pod.metadata.ownerReferences ?? []).some((r) => r.controller && r.kind === 'Job');
}

const terminalPhase = (p: string | undefined) => p === 'Succeeded' || p === 'Failed';

interface ContainerState {
  spec: Any;
  state: Any;
  lastState: Any;
  restartCount: number;
  ready: boolean;
  started: boolean;
  containerID?: string;
  log?: ContainerLog;
  previousLog?: ContainerLog;
  proc?: ChildProcess;
  /** Why we killed it, which decides the terminated reason. */
  killReason?: 'OOMKilled' | 'Error';
  done: boolean;
  exitCode?: number;
}

/** One Pod's lifecycle on this node. */
class PodWorker {
  pod: KObject;
  readonly uid: string;
  readonly ns: string;
  readonly name: string;
  private readonly k: Kubelet;
  private readonly abort = new AbortController();
  private wakeWaiters: (() => void)[] = [];
  private wakes = 0;
  private drawnTiming?: PodTiming;
  phase = 'Pending';
  scheduled = false;
  scheduledAt?: string;
  startTime?: string;
  readonly containers: ContainerState[];
  private statusChain: Promise<void> = Promise.resolve();
  private deleting = false;
  finished: Promise<void>;
  private emptyDirRoot?: string;
  /** This Pod's own loopback address, from scheduling until its worker ends. */
  podIP?: string;

  constructor(k: Kubelet, pod: KObject) {
    this.k = k;
    this.pod = pod;
    this.uid = pod.metadata.uid!;
    this.ns = pod.metadata.namespace!;
    this.name = pod.metadata.name!;
    this.containers = (pod.spec?.containers ?? []).map((c: Any) => ({
      spec: c,
      state: { waiting: { reason: 'ContainerCreating' } },
      lastState: {},
      restartCount: 0,
      ready: false,
      started: false,
      done: false,
    }));
    this.finished = this.run()
      .catch((err) => {
        if (!(err instanceof Aborted)) this.k.logger.warn({ pod: this.name, err: String(err) }, 'kubelet: pod worker failed');
      })
      // The address is free for another Pod once this one's processes are gone.
      .finally(() => this.k.podIps.release(this.uid));
  }

  /** New state of the Pod object (or undefined once it is gone). */
  update(pod: KObject | undefined): void {
    if (pod) this.pod = pod;
    if (!pod || pod.metadata.deletionTimestamp) {
      this.terminate(!pod).catch((err) => this.k.logger.warn({ pod: this.name, err: String(err) }, 'kubelet: terminating failed'));
    }
    this.wake();
  }

  wake(): void {
    this.wakes++;
    for (const w of this.wakeWaiters.splice(0)) w();
  }

  /** Waits until `pred` holds, re-checking on every wake (a wake during an async check is not lost). */
  private async until(pred: () => boolean | Promise<boolean>): Promise<void> {
    for (;;) {
      if (this.abort.signal.aborted) throw new Aborted();
      const seen = this.wakes;
      if (await pred()) return;
      if (this.wakes !== seen) continue;
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(new Aborted());
        this.wakeWaiters.push(() => {
          this.abort.signal.removeEventListener('abort', onAbort);
          resolve();
        });
        this.abort.signal.addEventListener('abort', onAbort, { once: true });
      });
    }
  }

  private behaviour() {
    return this.k.opts.faults.podBehaviour(this.pod.metadata.labels);
  }

  private claims(): string[] {
    return (this.pod.spec?.volumes ?? []).map((v: Any) => v?.persistentVolumeClaim?.claimName).filter((c: unknown): c is string => typeof c === 'string');
  }

  /** `podTiming` is drawn once per Pod; fault overrides are applied at each phase. */
  private timing(): PodTiming {
    if (!this.drawnTiming) {
      this.drawnTiming = { unscheduledMs: 0, creatingMs: 0 };
      try {
        Object.assign(this.drawnTiming, this.k.opts.podTiming(this.pod as unknown as V1Pod));
      } catch (err) {
        this.k.logger.warn({ pod: this.name, err: String(err) }, 'kubelet: podTiming failed');
      }
    }
    const t = { ...this.drawnTiming };
    const b = this.behaviour();
    if (b.unscheduledMs !== undefined) t.unscheduledMs = b.unscheduledMs;
    if (b.creatingMs !== undefined) t.creatingMs = b.creatingMs;
    return t;
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    if (!this.pod.spec?.nodeName) {
      // Scheduling: wait out the drawn delay, a neverSchedule fault, and unbound claims.
      await sleep(this.timing().unscheduledMs, signal);
      await this.until(async () => {
        if (this.behaviour().neverSchedule) return false;
        for (const c of this.claims()) if (!(await this.k.api.claimExists(this.ns, c))) return false;
        return true;
      });
      await this.k.api.bind(this.ns, this.name, this.uid);
    }
    this.podIP = this.k.podIps.allocate(this.uid);
    this.scheduled = true;
    this.scheduledAt = rfc3339();
    this.startTime = rfc3339();
    this.k.opts.recorder.mark(this.name, 'scheduled', performance.now());
    this.writeStatus();
    await sleep(this.timing().creatingMs, signal);
    await this.until(() => !this.behaviour().neverStart);
    const volumes = this.prepareVolumes();
    await Promise.all(this.containers.map((c) => this.runContainer(c, volumes)));
    this.phase = this.containers.every((c) => c.exitCode === 0) ? 'Succeeded' : 'Failed';
    this.writeStatus();
    // The journal may forget the Pod only once its end is on record in the API.
    const journal = this.k.opts.journal;
    if (journal) {
      await this.statusChain;
      try {
        journal.forget(this.uid);
      } catch (err) {
        this.k.logger.warn({ pod: this.name, err: String(err) }, 'kubelet: journal update failed');
      }
    }
  }

  private prepareVolumes(): Map<string, string | undefined> {
    const dirs = new Map<string, string | undefined>();
    for (const v of this.pod.spec?.volumes ?? []) {
      let dir: string | undefined;
      if (v.persistentVolumeClaim?.claimName) dir = this.k.claimDir(v.persistentVolumeClaim.claimName, this.ns);
      else if (v.emptyDir) {
        this.emptyDirRoot ??= join(this.k.opts.dataDir, '.pods', this.uid);
        dir = join(this.emptyDirRoot, 'volumes', v.name);
      } else if (v.hostPath?.path) dir = v.hostPath.path;
      if (dir && !v.hostPath) mkdirSync(dir, { recursive: true });
      dirs.set(v.name, dir);
    }
    return dirs;
  }

  private commandFor(
    c: ContainerState,
    volumes: Map<string, string | undefined>,
  ): { argv: string[]; cwd: string; env: Record<string, string>; stop?: ProgramMapping['stop']; reason?: ProgramMapping['reason'] } {
    const spec = c.spec as V1Container;
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
    const expand = (s: string) => s.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (m, n) => (m === '$$' ? '$' : n in env ? env[n]! : m));
    for (const e of spec.env ?? []) {
      if (e.value !== undefined) env[e.name] = expand(e.value);
      else if (e.valueFrom?.fieldRef) env[e.name] = this.fieldRef(e.valueFrom.fieldRef.fieldPath);
    }
    // Longest mountPath first, so /data/x wins over /data.
    const mounts = (spec.volumeMounts ?? [])
      .map((m) => {
        const base = volumes.get(m.name);
        return base ? { path: m.mountPath.replace(/\/+$/, '') || '/', dir: m.subPath ? join(base, m.subPath) : base, readOnly: m.readOnly === true } : undefined;
      })
      .filter((m): m is { path: string; dir: string; readOnly: boolean } => !!m)
      .sort((a, b) => b.path.length - a.path.length);
    for (const m of mounts) if (m.dir !== undefined) mkdirSync(m.dir, { recursive: true });
    const rewrite = (s: string) => {
      for (const m of mounts) {
        if (s === m.path) return m.dir;
        if (s.startsWith(`${m.path}/`)) return join(m.dir, s.slice(m.path.length + 1));
      }
      return s;
    };
    const asGiven = { ...env };
    delete asGiven.PATH;
    for (const k of Object.keys(env)) if (k !== 'PATH') env[k] = rewrite(env[k]!);
    let mapped: ProgramMapping | undefined;
    try {
      mapped = this.k.opts.program?.(spec, this.pod as unknown as V1Pod, { env: asGiven, mounts });
    } catch (err) {
      this.k.logger.warn({ pod: this.name, err: String(err) }, 'kubelet: program mapping failed');
    }
    if (!mapped) {
      const command = (spec.command ?? []).map(expand);
      const args = (spec.args ?? []).map(expand);
      if (command[0] === FELIS_BINARY) {
        mapped = { command: [process.execPath, join(this.k.opts.repoRoot, 'dist/felis.mjs'), ...command.slice(1), ...args] };
      } else {
        mapped = { command: command.length ? [...command, ...args] : args };
      }
    }
    if (mapped.verbatim) return { argv: mapped.command, cwd: mapped.cwd ?? this.k.opts.dataDir, env: mapped.verbatim.env, stop: mapped.stop, reason: mapped.reason };
    const argv = mapped.command.map((a, i) => (i === 0 ? a : rewrite(a)));
    const cwd = mapped.cwd ?? (spec.workingDir ? rewrite(spec.workingDir) : this.k.opts.dataDir);
    return { argv, cwd, env, stop: mapped.stop, reason: mapped.reason };
  }

  private fieldRef(path: string): string {
    const m = this.pod.metadata;
    const label = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
    if (label) return (label[1] === 'labels' ? m.labels : m.annotations)?.[label[2]!] ?? '';
    const table: Record<string, string | undefined> = {
      'metadata.name': m.name,
      'metadata.namespace': m.namespace,
      'metadata.uid': m.uid,
      'spec.nodeName': this.k.api.nodeName,
      'spec.serviceAccountName': this.pod.spec?.serviceAccountName,
      'status.hostIP': '127.0.0.1',
      'status.podIP': this.podIP ?? '',
    };
    return table[path] ?? '';
  }

  private async runContainer(c: ContainerState, volumes: Map<string, string | undefined>): Promise<void> {
    const signal = this.abort.signal;
    const restartPolicy = this.pod.spec?.restartPolicy ?? 'Never';
    for (;;) {
      if (c.log) c.previousLog = c.log;
      c.log = new ContainerLog(this.k.opts.maxLogBytes, this.k.opts.logFiles?.open(this.ns, this.name, this.uid, c.spec.name, c.restartCount));
      const exit = await this.spawnOnce(c, volumes);
      c.log.end();
      const finishedAt = rfc3339();
      const startedAt = c.state.running?.startedAt ?? finishedAt;
      const terminated: Any = {
        exitCode: exit.code,
        reason: exit.reason,
        startedAt,
        finishedAt,
      };
      if (exit.message) terminated.message = exit.message;
      if (c.containerID) terminated.containerID = c.containerID;
      c.state = { terminated };
      c.ready = false;
      c.started = false;
      this.k.opts.recorder.mark(this.name, 'exited', performance.now());
      if (exit.code !== 0 && restartPolicy === 'OnFailure' && !this.deleting && !signal.aborted) {
        // Restart in place after a back-off, as CrashLoopBackOff does.
        c.restartCount++;
        c.lastState = { terminated };
        const delay = Math.min(10_000 * 2 ** (c.restartCount - 1), 300_000) * this.k.opts.backoffScale;
        c.state = {
          waiting: {
            reason: 'CrashLoopBackOff',
            message: `back-off ${Math.round(delay / 1000)}s restarting failed container=${c.spec.name} pod=${this.name}_${this.ns}(${this.uid})`,
          },
        };
        this.writeStatus();
        try {
          await sleep(delay, signal);
        } catch {
          break;
        }
        if (this.deleting) break;
        continue;
      }
      break;
    }
    c.done = true;
    c.exitCode = c.state.terminated?.exitCode ?? 137;
  }

  private spawnOnce(c: ContainerState, volumes: Map<string, string | undefined>): Promise<{ code: number; reason: string; message?: string }> {
    return new Promise((resolve) => {
      let argv: string[];
      let cwd: string;
      let env: Record<string, string>;
      let stop: ProgramMapping['stop'];
      let reasonOf: ProgramMapping['reason'];
      try {
        ({ argv, cwd, env, stop, reason: reasonOf } = this.commandFor(c, volumes));
      } catch (err) {
        resolve({ code: 128, reason: 'StartError', message: `failed to create containerd task: ${String(err)}` });
        return;
      }
      if (argv.length === 0 || !argv[0]) {
        resolve({ code: 128, reason: 'StartError', message: 'failed to create containerd task: no command specified' });
        return;
      }
      const proc = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      c.proc = proc;
      if (stop) stopHooks.set(proc, stop);
      this.k.processes.add(proc);
      this.journal(c, proc);
      let spawned = false;
      let oomTimer: NodeJS.Timeout | undefined;
      proc.stdout!.on('data', (b: Buffer) => c.log!.write('stdout', b));
      proc.stderr!.on('data', (b: Buffer) => c.log!.write('stderr', b));
      proc.once('spawn', () => {
        spawned = true;
        c.containerID = `containerd://${randomHex()}`;
        c.state = { running: { startedAt: rfc3339() } };
        c.ready = true;
        c.started = true;
        this.phase = 'Running';
        this.k.opts.recorder.mark(this.name, 'started', performance.now());
        this.writeStatus();
        const oom = this.behaviour().oomKillAfterMs;
        if (oom !== undefined) {
          oomTimer = setTimeout(() => {
            c.killReason = 'OOMKilled';
            killGroup(proc);
          }, oom);
        }
        // Deleted while it was starting.
        if (this.deleting) killGroup(proc);
      });
      proc.once('error', (err: NodeJS.ErrnoException) => {
        if (spawned) return;
        this.k.processes.delete(proc);
        c.proc = undefined;
        resolve({
          code: 128,
          reason: 'StartError',
          message: `failed to create containerd task: failed to create shim task: OCI runtime create failed: exec: "${argv[0]}": ${
            err.code === 'ENOENT' ? 'executable file not found in $PATH' : err.message
          }`,
        });
      });
      proc.once('close', (code, sig) => {
        if (oomTimer) clearTimeout(oomTimer);
        this.k.processes.delete(proc);
        c.proc = undefined;
        if (!spawned) return;
        const exitCode = code ?? 128 + (sig ? (osConstants.signals[sig] ?? 9) : 9);
        if (c.killReason === 'OOMKilled') resolve({ code: 137, reason: 'OOMKilled' });
        else resolve({ code: exitCode, reason: reasonOf?.(exitCode) ?? (exitCode === 0 ? 'Completed' : 'Error') });
      });
    });
  }

  /** Records a just-spawned process, in the same tick as the spawn, so a crash can hardly slip between. */
  private journal(c: ContainerState, proc: ChildProcess): void {
    const journal = this.k.opts.journal;
    if (!journal || proc.pid === undefined) return;
    const startTicks = processStartTicks(proc.pid);
    if (startTicks === undefined) return;
    try {
      journal.record({ podUid: this.uid, container: c.spec.name, namespace: this.ns, pod: this.name, pid: proc.pid, startTicks });
    } catch (err) {
      // A process we cannot record would be orphaned by a crash: better not to run it.
      this.k.logger.warn({ pod: this.name, err: String(err) }, 'kubelet: could not record the process; killing it');
      c.killReason = 'Error';
      killGroup(proc);
    }
  }

  /** The Pod was deleted (or vanished): kill what runs, report, and finish the deletion. */
  private async terminate(gone: boolean): Promise<void> {
    if (this.deleting) return;
    this.deleting = true;
    const running = this.containers.filter((c) => c.proc);
    for (const c of running) {
      c.killReason ??= 'Error';
      killGroup(c.proc!);
    }
    if (running.length === 0) this.abort.abort();
    await Promise.race([this.finished, grace(5000)]);
    if (gone) return;
    if (this.scheduled && !terminalPhase(this.phase)) {
      for (const c of this.containers) {
        if (!c.done && !c.state.terminated) {
          c.state = {
            terminated: {
              exitCode: 137,
              reason: 'ContainerStatusUnknown',
              message: 'The container could not be located when the pod was terminated',
              startedAt: null,
              finishedAt: rfc3339(),
            },
          };
        }
      }
      this.phase = 'Failed';
      this.writeStatus();
    }
    await this.statusChain;
    await this.k.api.finishDeletion(this.ns, this.name, this.uid);
  }

  stop(): void {
    this.deleting = true;
    for (const c of this.containers) if (c.proc) killGroup(c.proc);
    this.abort.abort();
  }

  private status(): Any {
    const now = rfc3339();
    const running = this.phase === 'Running' && this.containers.every((c) => c.ready);
    const done = terminalPhase(this.phase);
    const unready = this.containers.filter((c) => !c.ready).map((c) => c.spec.name);
    const cond = (type: string, ok: boolean, reason?: string, message?: string) => {
      const prev = (this.pod.status?.conditions ?? []).find((x: Any) => x.type === type);
      const status = ok ? 'True' : 'False';
      const c: Any = {
        type,
        status,
        lastProbeTime: null,
        lastTransitionTime: prev && prev.status === status ? prev.lastTransitionTime : now,
      };
      if (reason) c.reason = reason;
      if (message) c.message = message;
      return c;
    };
    const notReadyReason = done ? 'PodCompleted' : 'ContainersNotReady';
    const notReadyMsg = done ? undefined : `containers with unready status: [${unready.join(' ')}]`;
    return {
      phase: this.phase,
      conditions: [
        cond('PodReadyToStartContainers', this.containers.some((c) => c.containerID) && !done),
        cond('Initialized', true),
        cond('Ready', running, running ? undefined : notReadyReason, running ? undefined : notReadyMsg),
        cond('ContainersReady', running, running ? undefined : notReadyReason, running ? undefined : notReadyMsg),
        { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: this.scheduledAt ?? now },
      ],
      hostIP: '127.0.0.1',
      hostIPs: [{ ip: '127.0.0.1' }],
      ...(this.podIP ? { podIP: this.podIP, podIPs: [{ ip: this.podIP }] } : {}),
      startTime: this.startTime ?? now,
      containerStatuses: this.containers.map((c) => {
        const s: Any = {
          name: c.spec.name,
          state: c.state,
          lastState: c.lastState,
          ready: c.ready,
          restartCount: c.restartCount,
          image: c.spec.image,
          imageID: '',
          started: c.started,
        };
        if (c.containerID) s.containerID = c.containerID;
        return s;
      }),
      qosClass: this.pod.status?.qosClass ?? 'BestEffort',
    };
  }

  /** Status writes are serialised, so they land in order. */
  writeStatus(): void {
    const status = this.status();
    this.statusChain = this.statusChain
      .then(() => this.k.api.setPodStatus(this.ns, this.name, this.uid, status))
      .catch((err) => this.k.logger.warn({ pod: this.name, err: String(err) }, 'kubelet: status update failed'));
  }

  /** What `validateContainerLogStatus` decides from the status the kubelet reported. */
  logFor(container: string, previous: boolean): ContainerLog | string {
    const c = this.containers.find((x) => x.spec.name === container);
    const p = this.name;
    if (!c || !this.scheduled) return `container "${container}" in pod "${p}" is not available`;
    if (previous) {
      if (!c.lastState?.terminated || !c.previousLog) return `previous terminated container "${container}" in pod "${p}" not found`;
      return c.previousLog;
    }
    if (c.state.running) return c.log!;
    if (c.state.terminated) {
      if (!c.containerID || !c.log) return `container "${container}" in pod "${p}" is terminated`;
      return c.log;
    }
    if (c.state.waiting) {
      if (c.lastState?.terminated && c.log) return c.log;
      return `container "${container}" in pod "${p}" is waiting to start: ${c.state.waiting.reason}`;
    }
    return `container "${container}" in pod "${p}" is waiting to start - no logs yet`;
  }

  cleanup(): void {
    if (this.emptyDirRoot) rmSync(this.emptyDirRoot, { recursive: true, force: true });
  }

  /** The Pod is gone: its logs go with it. */
  removeLogs(): void {
    const files = this.k.opts.logFiles;
    if (files) files.remove(files.dirOf(this.ns, this.name, this.uid));
  }
}

function randomHex(): string {
  let s = '';
  for (let i = 0; i < 4; i++) s += Math.random().toString(16).slice(2, 18).padEnd(16, '0');
  return s.slice(0, 64);
}

/** The whole group, even when its leader has exited: what it started may still run. */
function killGroup(proc: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (proc.pid === undefined) return;
  killProcessGroup(proc.pid, signal);
  stopHooks.get(proc)?.(signal);
}

/** What else a kill must reach, per process (a container runtime's container lives outside the group). */
const stopHooks = new WeakMap<ChildProcess, (signal: NodeJS.Signals) => void>();

const exited = (p: ChildProcess) => p.exitCode !== null || p.signalCode !== null;

export class Kubelet {
  readonly api: NodeApi;
  readonly opts: KubeletOptions;
  readonly logger: Log;
  readonly processes = new Set<ChildProcess>();
  /** One loopback address per running Pod (status.podIP). */
  readonly podIps = new PodIpPool();
  private readonly workers = new Map<string, PodWorker>();
  private readonly byName = new Map<string, PodWorker>();
  /** Pods whose logs are on disk from an earlier run and that no worker runs: by uid and by name. */
  private readonly archived = new Map<string, PodLogDir>();
  private readonly archivedByName = new Map<string, PodLogDir>();
  private unsubscribe: (() => void)[] = [];
  private reconciling = false;
  private dirty = false;
  private closed = false;

  constructor(api: NodeApi, opts: KubeletOptions) {
    this.api = api;
    this.opts = opts;
    this.logger = opts.logger;
  }

  start(): void {
    for (const d of this.opts.logFiles?.scan() ?? []) {
      this.archived.set(d.uid, d);
      this.archivedByName.set(`${d.namespace}/${d.pod}`, d);
    }
    this.unsubscribe.push(this.api.onChange(() => this.kick()));
    this.unsubscribe.push(this.opts.faults.subscribe(() => this.kick()));
    this.kick();
  }

  /** The local directory behind a claim: `world-<server>-0` → `<dataDir>/worlds/<server>`. */
  claimDir(claim: string, namespace: string): string {
    const custom = this.opts.claimPath?.(claim, namespace);
    if (custom) return custom;
    const m = /^world-(.+)-0$/.exec(claim);
    if (m) return join(this.opts.dataDir, 'worlds', m[1]!);
    return join(this.opts.dataDir, 'claims', namespace, claim);
  }

  private kick(): void {
    if (this.closed) return;
    if (this.reconciling) {
      this.dirty = true;
      return;
    }
    this.reconciling = true;
    setImmediate(() => {
      void this.reconcile().finally(() => {
        this.reconciling = false;
        if (this.dirty) {
          this.dirty = false;
          this.kick();
        }
      });
    });
  }

  private async reconcile(): Promise<void> {
    if (this.closed) return;
    let pods: KObject[];
    try {
      // The Pods it runs, and those it may start; a finished Pod it never ran is of no use to it.
      pods = await this.api.podsToRun(
        (p) => this.workers.has(p.metadata.uid!) || this.archived.has(p.metadata.uid!) || (hasJobController(p as KObject) && !terminalPhase(p.status?.phase) && !p.metadata.deletionTimestamp),
      );
    } catch (err) {
      this.logger.warn({ err: String(err) }, 'kubelet: listing pods failed');
      return;
    }
    const seen = new Set<string>();
    for (const pod of pods) {
      const uid = pod.metadata.uid!;
      seen.add(uid);
      const w = this.workers.get(uid);
      if (w) {
        w.update(pod);
        continue;
      }
      const archived = this.archived.get(uid);
      if (archived) {
        if (!terminalPhase(pod.status?.phase)) this.unarchive(archived);
        else continue;
      }
      // Only Job Pods run here; others (a game Pod in a test) are just stored.
      if (!hasJobController(pod) || terminalPhase(pod.status?.phase) || pod.metadata.deletionTimestamp) continue;
      const worker = new PodWorker(this, pod);
      this.workers.set(uid, worker);
      this.byName.set(`${pod.metadata.namespace}/${pod.metadata.name}`, worker);
    }
    for (const [uid, w] of this.workers) {
      if (seen.has(uid)) continue;
      w.update(undefined);
      this.workers.delete(uid);
      if (this.byName.get(`${w.ns}/${w.name}`) === w) this.byName.delete(`${w.ns}/${w.name}`);
      void w.finished.then(() => {
        w.cleanup();
        w.removeLogs();
      });
    }
    // Logs kept from an earlier run whose Pod is gone now go with it.
    for (const [uid, d] of this.archived) {
      if (seen.has(uid)) continue;
      this.unarchive(d);
      this.opts.logFiles?.remove(d.dir);
    }
  }

  private unarchive(d: PodLogDir): void {
    this.archived.delete(d.uid);
    if (this.archivedByName.get(`${d.namespace}/${d.pod}`) === d) this.archivedByName.delete(`${d.namespace}/${d.pod}`);
  }

  /** The log of a Pod that ran before a restart, read back from its files. */
  private archivedLog(d: PodLogDir, container: string, query: LogQuery): ContainerLogResult {
    const lines = this.opts.logFiles!.read(d.dir, container, !!query.previous);
    if (!lines) {
      const message = query.previous ? `previous terminated container "${container}" in pod "${d.pod}" not found` : `container "${container}" in pod "${d.pod}" is terminated`;
      return { ok: false, code: 400, message };
    }
    return { ok: true, stream: readLog(ContainerLog.ofLines(lines, this.opts.maxLogBytes), query) };
  }

  /**
   * `GET /containerLogs/{ns}/{pod}/{container}`: the kubelet half of `pods/log`. Errors are the
   * kubelet's plain-text messages with their status (400, or 404 for an unknown Pod).
   */
  containerLogs(namespace: string, pod: string, container: string, query: LogQuery): ContainerLogResult {
    const w = this.byName.get(`${namespace}/${pod}`);
    if (!w) {
      const d = this.archivedByName.get(`${namespace}/${pod}`);
      if (d) return this.archivedLog(d, container, query);
      return { ok: false, code: 404, message: `pod "${pod}" does not exist` };
    }
    const log = w.logFor(container, !!query.previous);
    if (typeof log === 'string') return { ok: false, code: 400, message: log };
    return { ok: true, stream: readLog(log, query) };
  }

  /**
   * Kills every running Pod process group now, synchronously: for an exit that cannot wait (the
   * forced exit after the stop grace). Statuses are not written; the next start marks the Pods.
   */
  killAllNow(): void {
    for (const p of this.processes) killGroup(p);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const u of this.unsubscribe) u();
    const exitOf = (p: ChildProcess) => new Promise<void>((r) => (exited(p) ? r() : p.once('close', () => r())));
    const graceMs = this.opts.shutdownGraceMs ?? 0;
    if (graceMs > 0 && this.processes.size > 0) {
      // Their output is still read (and written to the log files) while they finish.
      const running = [...this.processes];
      for (const p of running) killGroup(p, 'SIGTERM');
      await Promise.race([Promise.all(running.map(exitOf)), grace(graceMs)]);
    }
    for (const w of this.workers.values()) w.stop();
    for (const p of this.processes) killGroup(p);
    await Promise.race([Promise.all([...this.processes].map(exitOf)), grace(3000)]);
    await Promise.race([Promise.all([...this.workers.values()].map((w) => w.finished)), grace(1000)]);
    for (const w of this.workers.values()) w.cleanup();
    this.workers.clear();
    this.byName.clear();
  }
}

/**
 * What this process's children cost while a bench runs: each child's peak resident memory
 * (`VmHWM`) and the CPU time it used meanwhile (user + system), from `/proc`, looked at every
 * 50 ms (a Pod's program ends with its transfer, and its numbers go with it; the CPU of its last
 * 50 ms is missed). Linux only; elsewhere it reports nothing.
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface Seen {
  /** The program it runs. */
  comm: string;
  /** The highest peak RSS seen, MiB. */
  mib: number;
  /** CPU seconds (user + system) from the first look to the last. */
  cpuS: number;
}

export interface ProcWatch {
  /** Stops looking; what was seen of each child. */
  stop(): Map<number, Seen>;
}

const TICKS_PER_S = 100;

/** The parent pid and command name from `/proc/<pid>/stat`, or none once the process is gone. */
function stat(pid: number): { ppid: number; comm: string; ticks: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The name is in parentheses and may hold spaces; the fields after it are plain.
    const close = s.lastIndexOf(')');
    const f = s.slice(close + 2).split(' ');
    return { comm: s.slice(s.indexOf('(') + 1, close), ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
  } catch {
    return undefined;
  }
}

/** The program a process runs (argv[0]): Node names its main thread `MainThread`, so `comm` does not tell. */
function program(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]?.split('/').pop();
  } catch {
    return undefined;
  }
}

function hwmKiB(pid: number): number {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Starts looking at the children of `parent` (this process by default). */
export function watchChildren(parent = process.pid): ProcWatch {
  const seen = new Map<number, Seen & { firstTicks: number }>();
  const look = () => {
    let pids: string[];
    try {
      pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
    } catch {
      return;
    }
    for (const d of pids) {
      const pid = Number(d);
      const s = stat(pid);
      if (s?.ppid !== parent) continue;
      const mib = hwmKiB(pid) / 1024;
      const was = seen.get(pid);
      if (!was) seen.set(pid, { comm: program(pid) ?? s.comm, mib, cpuS: 0, firstTicks: s.ticks });
      else {
        was.mib = Math.max(was.mib, mib);
        was.cpuS = (s.ticks - was.firstTicks) / TICKS_PER_S;
      }
    }
  };
  look();
  const timer = setInterval(look, 50);
  return {
    stop() {
      clearInterval(timer);
      look();
      return new Map([...seen].map(([pid, { comm, mib, cpuS }]) => [pid, { comm, mib, cpuS }]));
    },
  };
}

/** Node programs among `seen` whose pid is (or, with `not`, is not) in `pids`. */
function nodes(seen: Map<number, Seen>, pids: Set<number>, not: boolean): Seen[] {
  return [...seen].filter(([pid, s]) => pids.has(pid) !== not && s.comm.startsWith('node')).map(([, s]) => s);
}

/** The highest peak RSS (MiB, whole) of those node programs. */
export function highestPeak(seen: Map<number, Seen>, pids: Set<number>, not = false): number {
  return Math.round(Math.max(0, ...nodes(seen, pids, not).map((s) => s.mib)));
}

/** The CPU seconds those node programs used, together. */
export function cpuSeconds(seen: Map<number, Seen>, pids: Set<number>, not = false): number {
  return nodes(seen, pids, not).reduce((a, s) => a + s.cpuS, 0);
}

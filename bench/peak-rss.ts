/**
 * Peak resident memory of this process's children while a bench runs: each child's `VmHWM` from
 * `/proc`, looked at every 50 ms (a Pod's program ends with its transfer, and its peak goes with
 * it). Linux only; elsewhere it reports nothing.
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface PeakRss {
  /** Stops looking; the highest peak seen per child, in MiB, with the program it runs. */
  stop(): Map<number, { comm: string; mib: number }>;
}

/** The parent pid and command name from `/proc/<pid>/stat`, or none once the process is gone. */
function stat(pid: number): { ppid: number; comm: string } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The name is in parentheses and may hold spaces; the fields after it are plain.
    const close = s.lastIndexOf(')');
    return { comm: s.slice(s.indexOf('(') + 1, close), ppid: Number(s.slice(close + 2).split(' ')[1]) };
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
export function watchPeakRss(parent = process.pid): PeakRss {
  const peaks = new Map<number, { comm: string; mib: number }>();
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
      if (mib > (peaks.get(pid)?.mib ?? 0)) peaks.set(pid, { comm: peaks.get(pid)?.comm ?? program(pid) ?? s.comm, mib });
    }
  };
  look();
  const timer = setInterval(look, 50);
  return {
    stop() {
      clearInterval(timer);
      look();
      return peaks;
    },
  };
}

/** The highest peak among `peaks` whose pid is (or, with `not`, is not) in `pids`, node programs only. */
export function highestPeak(peaks: Map<number, { comm: string; mib: number }>, pids: Set<number>, not = false): number {
  let best = 0;
  for (const [pid, p] of peaks) if (pids.has(pid) !== not && p.comm.startsWith('node')) best = Math.max(best, p.mib);
  return Math.round(best);
}

/**
 * Identifying and ending the kubelet's processes by pid alone, for when the `ChildProcess` handle
 * is gone (a restart after a crash) or there is no time to wait for it (a forced exit). A pid can be
 * reused once its process is gone, so a process is only ever signalled after its start time
 * matches the one recorded when it was spawned.
 *
 * @module
 */

import { readFileSync } from 'node:fs';

/** Fields of `/proc/<pid>/stat` after the command name, which may itself hold spaces or ')'. */
function statFields(pid: number): string[] | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const end = text.lastIndexOf(')');
  if (end < 0) return undefined;
  // Field 3 (state) is the first after the name; field 22 (starttime) is 19 further on.
  return text
    .slice(end + 2)
    .trim()
    .split(/\s+/);
}

/** The process's start time in clock ticks since boot, or undefined if there is no such process. */
export function processStartTicks(pid: number): string | undefined {
  return statFields(pid)?.[19];
}

/** The recorded process is still running: same pid, same start time, and not a zombie. */
export function isRecordedProcessAlive(pid: number, startTicks: string): boolean {
  const f = statFields(pid);
  return !!f && f[19] === startTicks && f[0] !== 'Z' && f[0] !== 'X';
}

/** SIGKILL (or `signal`) to a process group (the process itself if the group is gone). Never throws. */
export function killProcessGroup(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (!Number.isInteger(pid) || pid <= 1) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/**
 * Ends each recorded process that is still the one recorded (its whole group), then waits up to
 * `timeoutMs` for them to be gone. Returns the pids that were signalled and those still alive.
 */
export async function endRecordedProcesses(records: { pid: number; startTicks: string }[], timeoutMs = 5000): Promise<{ killed: number[]; survivors: number[] }> {
  const killed: number[] = [];
  for (const r of records) {
    if (!isRecordedProcessAlive(r.pid, r.startTicks)) continue;
    killProcessGroup(r.pid);
    killed.push(r.pid);
  }
  const deadline = Date.now() + timeoutMs;
  const alive = () => records.filter((r) => killed.includes(r.pid) && isRecordedProcessAlive(r.pid, r.startTicks)).map((r) => r.pid);
  let survivors = alive();
  while (survivors.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    survivors = alive();
  }
  return { killed, survivors };
}

/**
 * The kubelet's journal of the processes it started: one record per Pod container, written right
 * after the process is spawned and dropped once the Pod's final status has been written. After a
 * crash of the service the journal is the only way to find (and end) the Pods' processes, which
 * run in their own process groups and so outlive it.
 *
 * @module
 */

export interface ProcessRecord {
  podUid: string;
  container: string;
  namespace: string;
  pod: string;
  /** The process id, which is also its process group id (the kubelet spawns it detached). */
  pid: number;
  /** Its start time in clock ticks since boot (`/proc/<pid>/stat` field 22): a reused pid differs. */
  startTicks: string;
}

export interface ProcessJournal {
  record(r: ProcessRecord): void;
  /** Drops every record of a Pod. */
  forget(podUid: string): void;
  list(): ProcessRecord[];
  clear(): void;
}

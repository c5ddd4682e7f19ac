/**
 * Every server in a namespace whose world is held, or that carries a lock that no longer holds:
 * the operators' overview. Two list calls however many servers there are.
 * @module
 */

import type { ServerApi } from '../kube/servers.ts';
import { LABEL_SERVER } from '../labels.ts';
import { type HoldState, holdState } from './holder.ts';

export interface ServerHold {
  server: string;
  state: HoldState;
}

/** Held servers and servers with a stale lock, by name. */
export async function listHolders(api: ServerApi, namespace: string, now: Date): Promise<ServerHold[]> {
  // Every Job that names a server, in one list; holdState picks out each server's own.
  const [servers, jobs] = await Promise.all([api.listServers(namespace), api.listJobs(namespace, LABEL_SERVER)]);
  return servers
    .map((s) => ({ server: s.metadata.name, state: holdState(s.metadata.name, s.metadata.annotations, jobs, now) }))
    .filter((h) => h.state.holder !== undefined || h.state.staleLock !== undefined)
    .sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0));
}

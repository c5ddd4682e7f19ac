/**
 * What a pull reads besides its flags, as the op request carries it: here, below the request's
 * types (job/runtime/types.ts), so they need nothing from the op (functions/files-pull/job/pull.ts) that reads it.
 *
 * @module
 */
import type { ConnectOptions } from './connect.ts';

type Env = Record<string, string | undefined>;

/** What a pull reads besides its flags: the operator's rules and bounds, from the Job's env. */
export interface PullSettings {
  url: string;
  env: Env;
  /** Tests: the resolver and the request function (to spy on connections). */
  connect?: Pick<ConnectOptions, 'resolve' | 'request'>;
  /** Ends the pull as cancelled (the cancel call the Pod serves: serve/cancel-server.ts). */
  cancel?: AbortSignal;
}

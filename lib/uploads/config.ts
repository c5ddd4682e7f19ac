/**
 * Upload-session settings from the environment. Sessions (and single uploads) need the shared job
 * key (`FELIS_JOB_KEY_FILE`); without it the upload routes answer 503.
 *
 * - `FELIS_UPLOAD_IDLE_SECONDS` (default 1800): a session with no begin or accepted part for this
 *   long ends and its bytes are removed. Its receiver holds nothing meanwhile (only its calls hold
 *   the world, each in its turn), so the period is a trade: long enough to resume after a dropped
 *   connection or a laptop lid closed over lunch, short enough that a forgotten session's bytes do
 *   not stay on the volume for hours.
 * - `FELIS_UPLOAD_LIFETIME_SECONDS` (default 21600): a receiver stops after this long whatever
 *   happens; the session stays on the disk and the next call starts a new receiver for it.
 * - `FELIS_UPLOAD_BODY_IDLE_SECONDS` (default 30): a body (single upload or part) that sends
 *   nothing for this long is answered 408 `upload_stalled` and changes nothing.
 * - `FELIS_UPLOAD_URL_SECONDS` (default 600, at most 900): how long a signed upload URL stays
 *   valid. Short: the URL is a bearer credential for one write, and a panel uses it at once.
 * @module
 */
import { readVariables, wholeNumber } from '../env-readers.ts';

export interface UploadConfig {
  idleSeconds: number;
  lifetimeSeconds: number;
  /**
   * A caller may pause its body (a single upload's, a part's) this long; past it the upload is
   * answered 408 `upload_stalled`, nothing is kept, and the world is given back. Optional in
   * settings written before it existed: `DEFAULT_BODY_IDLE_SECONDS` then.
   */
  bodyIdleSeconds?: number;
  /** How long a signed upload URL is valid; `DEFAULT_UPLOAD_URL_SECONDS` when absent. */
  urlSeconds?: number;
}

export const DEFAULT_UPLOAD_URL_SECONDS = 600;

/**
 * The default body idle limit: as long as a receiver keeps a silent connection open, so the
 * function answers before (or as) the receiver gives up on it.
 */
export const DEFAULT_BODY_IDLE_SECONDS = 30;

/** The defaults; the Job program's sweep of abandoned sessions falls back to the same idle period. */
export const DEFAULT_UPLOAD_CONFIG: UploadConfig = { idleSeconds: 1800, lifetimeSeconds: 21_600 };

const VARIABLES = {
  FELIS_UPLOAD_IDLE_SECONDS: wholeNumber(DEFAULT_UPLOAD_CONFIG.idleSeconds, 1, 86_400),
  FELIS_UPLOAD_LIFETIME_SECONDS: wholeNumber(DEFAULT_UPLOAD_CONFIG.lifetimeSeconds, 60, 86_400),
  FELIS_UPLOAD_BODY_IDLE_SECONDS: wholeNumber(DEFAULT_BODY_IDLE_SECONDS, 1, 3_600),
  // At most 15 minutes (lib/uploads/url-tickets.ts, MAX_UPLOAD_URL_SECONDS).
  FELIS_UPLOAD_URL_SECONDS: wholeNumber(DEFAULT_UPLOAD_URL_SECONDS, 10, 900),
};

export function uploadConfigFromEnv(env: NodeJS.ProcessEnv): UploadConfig {
  const e = readVariables(VARIABLES, env);
  return { idleSeconds: e.FELIS_UPLOAD_IDLE_SECONDS, lifetimeSeconds: e.FELIS_UPLOAD_LIFETIME_SECONDS, bodyIdleSeconds: e.FELIS_UPLOAD_BODY_IDLE_SECONDS, urlSeconds: e.FELIS_UPLOAD_URL_SECONDS };
}

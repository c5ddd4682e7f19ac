/**
 * Download settings from the environment. Downloads need the shared job key
 * (`FELIS_JOB_KEY_FILE`, as browse sessions do): it signs the URLs and derives each export Job's
 * token. Without it, the download routes answer 503 `export_unavailable`.
 * @module
 */
import { optional, readVariables, wholeNumber } from '../env-readers.ts';

export interface DownloadConfig {
  keyFile: string;
  /** How long a signed URL stays valid. */
  urlSeconds: number;
  /** Export Jobs of one server that may run at once; one more is refused with 429 export_busy. */
  maxPerServer: number;
  /** The export program stops when nobody claims its download for this long. */
  idleSeconds: number;
  /** How long a GET waits for the export Pod to serve before it gives up (504). */
  startTimeoutMs: number;
  /** The export Job's deadline: the longest one download may take. */
  deadlineSeconds: number;
  /** The origin put in front of signed URLs; default: none (origin-relative), never a request's Host. */
  baseUrl?: string;
}

const VARIABLES = {
  FELIS_JOB_KEY_FILE: optional,
  FELIS_DOWNLOAD_URL_SECONDS: wholeNumber(600, 10, 86_400),
  FELIS_DOWNLOAD_MAX_PER_SERVER: wholeNumber(2, 1, 100),
  FELIS_DOWNLOAD_IDLE_SECONDS: wholeNumber(60, 5, 3_600),
  FELIS_DOWNLOAD_START_SECONDS: wholeNumber(60, 1, 600),
  FELIS_DOWNLOAD_DEADLINE_SECONDS: wholeNumber(7_200, 60, 86_400),
  FELIS_DOWNLOAD_BASE_URL: optional,
};

export function downloadConfigFromEnv(env: NodeJS.ProcessEnv): DownloadConfig | undefined {
  const e = readVariables(VARIABLES, env);
  if (!e.FELIS_JOB_KEY_FILE) return undefined;
  if (e.FELIS_DOWNLOAD_BASE_URL !== undefined && !/^https?:\/\/[^/?#]+$/.test(e.FELIS_DOWNLOAD_BASE_URL)) {
    throw new Error('FELIS_DOWNLOAD_BASE_URL: expected an origin such as https://felis.example.com (no path)');
  }
  return {
    keyFile: e.FELIS_JOB_KEY_FILE,
    urlSeconds: e.FELIS_DOWNLOAD_URL_SECONDS,
    maxPerServer: e.FELIS_DOWNLOAD_MAX_PER_SERVER,
    idleSeconds: e.FELIS_DOWNLOAD_IDLE_SECONDS,
    startTimeoutMs: e.FELIS_DOWNLOAD_START_SECONDS * 1000,
    deadlineSeconds: e.FELIS_DOWNLOAD_DEADLINE_SECONDS,
    ...(e.FELIS_DOWNLOAD_BASE_URL ? { baseUrl: e.FELIS_DOWNLOAD_BASE_URL } : {}),
  };
}

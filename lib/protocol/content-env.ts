/**
 * Write content as it travels to the file Job. Two ways:
 *
 * **Streamed (with a job key).** The Job runs `--op write --receive` and listens on its Pod address
 * (the serving env: `FELIS_POD_IP`, `FELIS_SERVE_PORT`, `FELIS_SERVE_TOKEN_SHA256`, idle and
 * lifetime); the function PUTs the bytes to `WRITE_CONTENT_PATH` with the Job's token and a
 * `Content-Length`. No Job or Pod object holds the content, only its SHA-256 (`--sha256`).
 *
 * **In the env (the Felis-compatible fallback, without a job key).** The content rides in env vars,
 * because the API cannot create Secrets and args are visible in more places (process listings,
 * audit logs). Anyone who can list Pods or Jobs in the namespace reads it until the Job's TTL.
 *
 * `FELIS_FILE_CONTENT_PARTS=<n>` then `FELIS_FILE_CONTENT_0` … `FELIS_FILE_CONTENT_<n-1>`: standard
 * padded base64 of the content, cut into pieces of at most 65536 characters, because Linux refuses
 * any single env string over 128 KiB (MAX_ARG_STRLEN) and the container would never start. Empty
 * content is `PARTS=0` and no part variables. The renderer (felis-api side) encodes, the Job decodes.
 *
 * @module
 */

/** Where a streamed write's Job takes its one body. */
export const WRITE_CONTENT_PATH = '/content';
/**
 * A streamed write's Job waits this long for its body once it listens (the function sends as soon
 * as the Pod can take it; one that gave up or died leaves the Job to end here, writing nothing)…
 */
export const WRITE_RECEIVE_IDLE_SECONDS = 10;
/** …and stops listening this long after its start whatever happens. */
export const WRITE_RECEIVE_LIFETIME_SECONDS = 60;

export const CONTENT_PARTS_ENV = 'FELIS_FILE_CONTENT_PARTS';
export const CONTENT_PART_ENV_PREFIX = 'FELIS_FILE_CONTENT_';
/** Characters of base64 per part; a multiple of 4, so only the last part can carry padding. */
export const CONTENT_PART_CHARS = 65536;

export interface EnvVar {
  name: string;
  value: string;
}

/** A content env that cannot be decoded: the Job exits 2 (a wiring mistake, not a caller fault). */
export class ContentEnvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContentEnvError';
  }
}

/** The env vars that carry `content`, PARTS first, parts in order. */
export function encodeContentEnv(content: Buffer): EnvVar[] {
  const b64 = content.toString('base64');
  const out: EnvVar[] = [];
  const n = Math.ceil(b64.length / CONTENT_PART_CHARS);
  out.push({ name: CONTENT_PARTS_ENV, value: String(n) });
  for (let i = 0; i < n; i++) {
    out.push({
      name: CONTENT_PART_ENV_PREFIX + i,
      value: b64.slice(i * CONTENT_PART_CHARS, (i + 1) * CONTENT_PART_CHARS),
    });
  }
  return out;
}

/** Standard alphabet, length a multiple of 4, `=` only as 1 or 2 characters of final padding. */
export const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Reassembles the content from an env. Throws `ContentEnvError` when the count is missing, empty,
 * not an integer or negative, when a part is missing, or when the joined base64 is invalid
 * (strict: `Buffer.from(s, 'base64')` would silently skip junk, so the text is checked first).
 */
export function decodeContentEnv(env: NodeJS.ProcessEnv | Record<string, string | undefined>): Buffer {
  const raw = env[CONTENT_PARTS_ENV];
  if (raw === undefined) throw new ContentEnvError(`${CONTENT_PARTS_ENV} is not set`);
  if (raw === '') throw new ContentEnvError(`${CONTENT_PARTS_ENV} is empty`);
  if (!/^[+-]?[0-9]+$/.test(raw)) throw new ContentEnvError(`${CONTENT_PARTS_ENV} is not an integer: ${JSON.stringify(raw)}`);
  const n = Number(raw);
  if (n < 0) throw new ContentEnvError(`${CONTENT_PARTS_ENV} is negative: ${raw}`);
  if (!Number.isSafeInteger(n)) throw new ContentEnvError(`${CONTENT_PARTS_ENV} is out of range: ${raw}`);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const part = env[CONTENT_PART_ENV_PREFIX + i];
    if (part === undefined) throw new ContentEnvError(`${CONTENT_PART_ENV_PREFIX}${i} is not set (${CONTENT_PARTS_ENV}=${raw})`);
    parts.push(part);
  }
  const b64 = parts.join('');
  if (!STRICT_BASE64.test(b64)) throw new ContentEnvError('the content is not valid base64');
  return Buffer.from(b64, 'base64');
}

/**
 * The limits both sides of the protocol hold to, declared once: the functions refuse past them
 * before any Job exists, and the Job program refuses past them whatever reaches it.
 * @module
 */

/** The most content one write carries (streamed to its Pod, or in the Job's env): Felis caps it here. */
export const MAX_WRITE_BYTES = 256 << 10;

/** A search by name: matches per answer by default and at most, and the shortest query (characters). */
export const SEARCH_DEFAULT_LIMIT = 200;
export const SEARCH_MAX_LIMIT = 1000;
export const SEARCH_MIN_QUERY = 2;
/**
 * How long a search walks before it answers what it found with `truncated`. Half the browse call's
 * default timeout (10 s), so a warm search answers before its caller gives up on the browse Pod
 * and starts the same search again in a one-shot Job.
 */
export const SEARCH_BUDGET_MS = 5_000;
/** A regular file up to this size is copied while the caller waits (200); anything else in the background (202). */
export const COPY_SYNC_MAX_BYTES = 64 << 20;

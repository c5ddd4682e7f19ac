/**
 * The limits both sides of the protocol hold to, declared once: the functions refuse past them
 * before any Job exists, and the Job program refuses past them whatever reaches it.
 * @module
 */

/** The most bytes a read answers (Felis's). */
export const MAX_READ_BYTES = 1 << 20;
/**
 * The most content one write carries, streamed to its Pod (a job key) or in an edit session's
 * call: as much as a read shows, so a file a panel opened can be saved.
 */
export const MAX_WRITE_BYTES = MAX_READ_BYTES;
/**
 * The most a write carries in its Job's env (no job key, Felis's way): Felis's own cap. It keeps
 * the Job and its Pod (base64 in both) well under etcd's 1.5 MiB an object, and a Felis image
 * refuses more.
 */
export const MAX_ENV_WRITE_BYTES = 256 << 10;

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
/**
 * A content search (`content=`): the text's length in UTF-8 bytes, the largest file searched (a
 * larger text file is skipped and the answer says `truncated`), and the most bytes one search
 * reads (beside SEARCH_BUDGET_MS, whichever ends first). Its matches per answer are a name
 * search's (SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT).
 */
export const CONTENT_MIN_BYTES = 1;
export const CONTENT_MAX_BYTES = 256;
export const CONTENT_MAX_FILE_BYTES = 8 << 20;
export const CONTENT_BUDGET_BYTES = 2 * 1024 ** 3;
/** The most of a line a content match shows, in UTF-8 bytes (so at most as many characters), around the match. */
export const CONTENT_TEXT_MAX_BYTES = 512;
/**
 * How long a disk usage walk runs in a browse Pod before it answers `truncated`, which sends the
 * caller to the one-shot Job (its budget is 20 s). Half the browse call's default timeout, for
 * the reason a search's is.
 */
export const USAGE_WARM_BUDGET_MS = 5_000;
/** A regular file up to this size is copied while the caller waits (200); anything else in the background (202). */
export const COPY_SYNC_MAX_BYTES = 64 << 20;

/**
 * The limits both sides of the protocol hold to, declared once: the functions refuse past them
 * before any Job exists, and the Job program refuses past them whatever reaches it.
 * @module
 */

/** The most content one write carries (streamed to its Pod, or in the Job's env): Felis caps it here. */
export const MAX_WRITE_BYTES = 256 << 10;

/** A regular file up to this size is copied while the caller waits (200); anything else in the background (202). */
export const COPY_SYNC_MAX_BYTES = 64 << 20;

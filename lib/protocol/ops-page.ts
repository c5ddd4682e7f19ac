/**
 * The ops listing's page bounds and the shape of an op id a caller may send (`?after=`,
 * `GET …/files/ops/{id}`): one definition for the route's schema (functions/files-ops/schemas.ts)
 * and the listing that reads the Jobs (lib/ops/list.ts). Plain constants.
 * @module
 */

/** How many ops a page shows without `?limit=`: the running one and the latest finished. */
export const DEFAULT_OPS = 10;
/**
 * The most ops one page shows (`?limit=`). A page costs one `jobs list`, one `pods list` and one
 * `pods/log get` per op on it whose Pod has started: at most 2 + MAX_OPS API calls (and at most
 * ten more logs when one of its ops ended without a result: lib/ops/list.ts `statesOf`).
 */
export const MAX_OPS = 100;
/**
 * An op id: a label value, since any background file Job's `files-op` label (ours are 16 hex, an
 * upload session's 32 hex, Felis's its own) names an op. Checked before any Kubernetes call, and
 * so safe in a label selector.
 */
export const OP_ID_SHAPE = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;

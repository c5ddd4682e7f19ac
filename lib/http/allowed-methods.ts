/**
 * Which methods an app answers at a path, from its registered routes: what a 405 names in its
 * `Allow` header when the path is known but the method is not. Hono's patterns: a `:param`
 * segment (with an optional `{regexp}`) takes one non-empty segment, a trailing `*` the rest.
 * Middleware (method `ALL`) does not make a path known.
 * @module
 */

export interface RouteLike {
  method: string;
  path: string;
}

function segmentMatches(pattern: string, seg: string): boolean {
  if (!pattern.startsWith(':')) return pattern === seg;
  if (seg === '') return false;
  const re = /^:[^{]*\{(.*)\}\??$/.exec(pattern);
  return re ? new RegExp(`^(?:${re[1]})$`).test(seg) : true;
}

/** Whether Hono's `pattern` matches `path` (both absolute). */
export function pathMatches(pattern: string, path: string): boolean {
  const want = pattern.split('/');
  const got = path.split('/');
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '*' && i === want.length - 1) return true;
    if (i >= got.length || !segmentMatches(want[i]!, got[i]!)) return false;
  }
  return want.length === got.length;
}

/** The methods `routes` answer at `path`, sorted; `HEAD` wherever `GET` is (Hono answers it from GET). */
export function allowedMethods(routes: readonly RouteLike[], path: string): string[] {
  const out = new Set<string>();
  for (const r of routes) {
    if (r.method === 'ALL' || !pathMatches(r.path, path)) continue;
    out.add(r.method);
    if (r.method === 'GET') out.add('HEAD');
  }
  return [...out].sort();
}

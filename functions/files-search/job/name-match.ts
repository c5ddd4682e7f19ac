/**
 * The name test of a search: a case-insensitive substring, or, when the query holds `*` or `?`, a
 * case-insensitive glob on the whole name (`*` any run of characters, `?` exactly one, everything
 * else literal). Written by hand rather than as a RegExp built from the query, so no query can
 * inject regular-expression syntax or make matching blow up: the glob runs in O(name × pattern)
 * at worst, with one backtrack point.
 *
 * @module
 */

/** Does the query ask for a glob rather than a substring? */
export function isGlob(q: string): boolean {
  return q.includes('*') || q.includes('?');
}

/**
 * A whole-name glob match of already case-folded code points. Classic single-star backtracking:
 * on a mismatch, retry just after the last `*`, letting it take one more character; an earlier
 * `*` never needs revisiting because the later one can absorb anything it would have.
 */
export function globMatch(pattern: readonly string[], name: readonly string[]): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let starN = 0;
  while (n < name.length) {
    const c = pattern[p];
    if (p < pattern.length && c !== '*' && (c === '?' || c === name[n])) {
      p++;
      n++;
    } else if (p < pattern.length && c === '*') {
      star = p++;
      starN = n;
    } else if (star >= 0) {
      p = star + 1;
      n = ++starN;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

/** Case folding for the comparison: both sides are lower-cased the same way. */
function fold(s: string): string {
  return s.toLowerCase();
}

const plain = (cs: readonly string[]) => !cs.includes('*') && !cs.includes('?');

/** The matcher for a query: `(name) => boolean`. */
export function nameMatcher(q: string): (name: string) => boolean {
  const folded = fold(q);
  if (!isGlob(q)) return (name) => fold(name).includes(folded);
  // `?` counts code points, so the general walk works on arrays of them.
  const pattern = Array.from(folded);
  // The common shapes (`*.yml`, `level*`, `*log*`) are plain string tests: same answer, no arrays.
  const head = pattern[0] === '*';
  const tail = pattern.length > 1 && pattern[pattern.length - 1] === '*';
  const lit = pattern.slice(head ? 1 : 0, tail ? -1 : undefined);
  if ((head || tail) && plain(lit)) {
    const l = lit.join('');
    if (head && tail) return (name) => fold(name).includes(l);
    if (head) return (name) => fold(name).endsWith(l);
    return (name) => fold(name).startsWith(l);
  }
  return (name) => globMatch(pattern, Array.from(fold(name)));
}

/** The query's length as the route counts it: characters (code points), not bytes. */
export function queryLength(q: string): number {
  return Array.from(q).length;
}

/**
 * Go's `path` package (Clean, Dir, Join) for slash-separated paths: the spec's rules are written
 * in terms of them ("clean the path", "folder <dir of to> does not exist"), so they must agree
 * byte for byte.
 *
 * @module
 */

/** Go `path.Clean`: "" → ".", slashes collapsed, `.` dropped, inner `..` folded; a leading `..` or `/` stays. */
export function clean(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
      continue;
    }
    out.push(seg);
  }
  const s = (rooted ? '/' : '') + out.join('/');
  return s === '' ? '.' : s;
}

/** Go `path.Dir`: everything but the last element, cleaned ("x" → ".", "a/b" → "a"). */
export function dir(p: string): string {
  const i = p.lastIndexOf('/');
  return clean(p.slice(0, i + 1));
}

/** Go `path.Join`: joins the non-empty elements with `/` and cleans; all empty → "". */
export function join(...elems: string[]): string {
  const parts = elems.filter((e) => e !== '');
  return parts.length === 0 ? '' : clean(parts.join('/'));
}

/** True when a cleaned relative path leads out of its base (`..` or `../...`). */
export function leadsOutside(cleaned: string): boolean {
  return cleaned === '..' || cleaned.startsWith('../');
}

/**
 * The name a pulled file lands under when the caller gives none: the `filename*` of the answer's
 * Content-Disposition (RFC 8187: charset'language'percent-encoded), then its `filename`, then the
 * last segment of the final URL's path (percent-decoded). Only the base name is taken (anything up
 * to the last `/` or `\` is dropped); the op then checks it like any name it creates. Pure.
 * @module
 */

/** The disposition's parameters, lower-cased names; quoted strings unescaped. */
function params(header: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /;\s*([^\s=;]+)\s*=\s*("((?:[^"\\]|\\.)*)"|[^;]*)/g;
  for (let m = re.exec(header); m; m = re.exec(header)) {
    const name = m[1].toLowerCase();
    if (out.has(name)) continue; // the first of a repeated parameter counts
    out.set(name, m[3] !== undefined ? m[3].replace(/\\(.)/g, '$1') : m[2].trim());
  }
  return out;
}

function decodeExt(v: string): string | undefined {
  const m = /^([^']*)'[^']*'(.*)$/.exec(v);
  if (!m) return undefined;
  const charset = m[1].toLowerCase();
  try {
    if (charset === 'utf-8') return decodeURIComponent(m[2]);
    if (charset === 'iso-8859-1') return m[2].replace(/%([0-9a-f]{2})/gi, (_x, h: string) => String.fromCharCode(parseInt(h, 16)));
  } catch {
    return undefined;
  }
  return undefined;
}

const base = (s: string): string => s.slice(Math.max(s.lastIndexOf('/'), s.lastIndexOf('\\')) + 1);

export interface NameSource {
  name: string;
  /** Said in a refusal of the name. */
  from: 'Content-Disposition' | 'URL';
}

/** The name the answer or the URL suggests, or undefined when neither names a file. */
export function suggestedName(disposition: string | undefined, url: URL): NameSource | undefined {
  if (disposition) {
    const p = params(disposition);
    const ext = p.get('filename*');
    const fromExt = ext !== undefined ? decodeExt(ext) : undefined;
    const plain = fromExt ?? p.get('filename');
    if (plain !== undefined && base(plain) !== '') return { name: base(plain), from: 'Content-Disposition' };
  }
  let last = url.pathname.slice(url.pathname.lastIndexOf('/') + 1);
  try {
    last = decodeURIComponent(last);
  } catch {
    // Keep the segment as it is: a stray % is part of the name.
  }
  const b = base(last);
  return b === '' ? undefined : { name: b, from: 'URL' };
}

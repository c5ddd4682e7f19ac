/**
 * The name a pulled file lands under when the caller gives none: the `filename*` of the answer's
 * Content-Disposition (RFC 8187: charset'language'percent-encoded), then its `filename`, then the
 * last segment of the final URL's path (percent-decoded). Only the base name is taken (anything up
 * to the last `/` or `\` is dropped); the op then checks it like any name it creates. Pure.
 *
 * A name the disposition gives is UTF-8 or it is refused, never guessed at: Node's HTTP client
 * hands a header's value over as latin1 (one character per byte), so its bytes are recovered
 * whole and decoded strictly, both a raw `filename` and a utf-8 `filename*` once percent-decoded.
 * A name that does not decode is a fault the op answers with `bad_name`, not a reason to fall back
 * to the URL's name: the server did name the file, and the caller should know it was refused.
 * @module
 */

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The disposition's parameters, lower-cased names; quoted strings unescaped. Still one character per byte. */
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

/** Text from the header's bytes as UTF-8, or undefined when they are not UTF-8. */
function strictUtf8(bytes: Buffer): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

type Decoded = { name: string } | { fault: string } | undefined;

/** A `filename*` value: its name, its fault, or undefined when its charset is one this reader does not take. */
function decodeExt(v: string): Decoded {
  const m = /^([^']*)'[^']*'(.*)$/.exec(v);
  if (!m) return undefined;
  const charset = m[1].toLowerCase();
  if (charset !== 'utf-8' && charset !== 'iso-8859-1') return undefined;
  if (/%(?![0-9A-Fa-f]{2})/.test(m[2])) return { fault: 'is not valid percent-encoding' };
  const bytes = Buffer.from(
    m[2].replace(/%([0-9A-Fa-f]{2})/g, (_x, h: string) => String.fromCharCode(parseInt(h, 16))),
    'latin1',
  );
  if (charset === 'iso-8859-1') return { name: bytes.toString('latin1') };
  const name = strictUtf8(bytes);
  return name === undefined ? { fault: 'is not valid UTF-8 once percent-decoded' } : { name };
}

/** A raw `filename` value: its bytes as UTF-8, or its fault. */
function decodePlain(v: string): Decoded {
  const name = strictUtf8(Buffer.from(v, 'latin1'));
  return name === undefined ? { fault: 'is not valid UTF-8' } : { name };
}

const base = (s: string): string => s.slice(Math.max(s.lastIndexOf('/'), s.lastIndexOf('\\')) + 1);

export type NameSource =
  | {
      name: string;
      /** Said in a refusal of the name. */
      from: 'Content-Disposition' | 'URL';
    }
  /** The disposition names the file in a way no name can be read from (`bad_name`). */
  | { fault: string; from: 'Content-Disposition' };

/**
 * The name the answer or the URL suggests, or undefined when neither names a file. `disposition`
 * is the header as Node's HTTP client gives it (latin1).
 */
export function suggestedName(disposition: string | undefined, url: URL): NameSource | undefined {
  if (disposition) {
    const p = params(disposition);
    const ext = p.get('filename*');
    const plain = p.get('filename');
    const decoded = (ext !== undefined ? decodeExt(ext) : undefined) ?? (plain !== undefined ? decodePlain(plain) : undefined);
    if (decoded && 'fault' in decoded) return { fault: `the file name its Content-Disposition gives ${decoded.fault}`, from: 'Content-Disposition' };
    if (decoded && base(decoded.name) !== '') return { name: base(decoded.name), from: 'Content-Disposition' };
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

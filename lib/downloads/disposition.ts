/**
 * `Content-Disposition: attachment` for a download's name (RFC 6266): an ASCII `filename=`
 * fallback for old clients (anything outside printable ASCII, quotes, backslashes and `%` become
 * `_`), and the exact name as `filename*=UTF-8''<percent-encoded>` (RFC 5987/8187) when the two
 * differ. Never a header injection: every control character is replaced or encoded.
 * @module
 */

/** The attr-char set of RFC 8187: everything else is percent-encoded. */
const ATTR_CHAR = /[A-Za-z0-9!#$&+\-.^_`|~]/;

function encodeExt(name: string): string {
  let out = '';
  for (const b of Buffer.from(name, 'utf8')) {
    const ch = String.fromCharCode(b);
    out += b < 0x80 && ATTR_CHAR.test(ch) ? ch : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/gu, '_');
  const plain = `attachment; filename="${fallback}"`;
  return fallback === filename ? plain : `${plain}; filename*=UTF-8''${encodeExt(filename)}`;
}

/** The download's file name: the path's last name, plus `.zip` for a folder. */
export function downloadFilename(path: string, dir: boolean): string {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  const base = parts[parts.length - 1] ?? 'download';
  return dir ? `${base}.zip` : base;
}

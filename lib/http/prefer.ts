/**
 * The `Prefer` request header (RFC 7240), as far as the file routes read it: the `wait`
 * preference, `wait=<delta-seconds>`, which a mutation takes as "if another file mutation holds
 * the world, wait up to this long for it instead of answering 409". Pure.
 *
 * RFC 7240 asks a server to ignore a preference it cannot parse or comply with and go on, never to
 * answer an error for it: a malformed `wait` (not digits, empty, quoted junk) is ignored, and the
 * request runs as if it had sent none. A value above the most the server waits is honoured as that
 * most (and said so in `Preference-Applied`); `wait=0` asks for no waiting, which is the default.
 * When a preference is given twice, the first counts (RFC 7240, section 2).
 * @module
 */

/** The longest a mutation waits for the world, whatever it asks. */
export const MAX_PREFER_WAIT_SECONDS = 30;

/** `token [ BWS "=" BWS word ] *( OWS ";" [ OWS parameter ] )`, split on commas outside quotes. */
function preferences(header: string): Array<{ name: string; value: string | undefined }> {
  const out: Array<{ name: string; value: string | undefined }> = [];
  let cur = '';
  let quoted = false;
  const flush = () => {
    const first = cur.split(';')[0]!.trim();
    cur = '';
    if (first === '') return;
    const eq = first.indexOf('=');
    const name = (eq < 0 ? first : first.slice(0, eq)).trim().toLowerCase();
    let value = eq < 0 ? undefined : first.slice(eq + 1).trim();
    if (value !== undefined && value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1).replace(/\\(.)/g, '$1');
    out.push({ name, value });
  };
  for (let i = 0; i < header.length; i++) {
    const ch = header[i]!;
    if (ch === '\\' && quoted) {
      cur += ch + (header[i + 1] ?? '');
      i++;
      continue;
    }
    if (ch === '"') quoted = !quoted;
    if (ch === ',' && !quoted) flush();
    else cur += ch;
  }
  flush();
  return out;
}

/**
 * The seconds a `Prefer` header (all its field lines joined with commas, as fetch's Headers joins
 * them) asks a mutation to wait for the world, at most MAX_PREFER_WAIT_SECONDS; undefined when it
 * asks for none, or asks in a form that cannot be read.
 */
export function preferWaitSeconds(header: string | null | undefined): number | undefined {
  if (!header) return undefined;
  const wait = preferences(header).find((p) => p.name === 'wait');
  if (!wait || wait.value === undefined || !/^\d{1,10}$/.test(wait.value)) return undefined;
  const n = Number(wait.value);
  if (n === 0) return undefined;
  return Math.min(n, MAX_PREFER_WAIT_SECONDS);
}

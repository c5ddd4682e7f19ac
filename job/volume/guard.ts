/**
 * Guarded files, matched by identity (device + inode), not by name, so symlinks and hard links to
 * them are caught too:
 * - `config/paper-global.yml` holds the Velocity forwarding secret: withheld, and opaque to every
 *   op (no hash, no size, no match against a guess; see docs/withheld-file.md);
 * - root `server.properties` is redacted on read (`rcon.password=`, `forwarding-secrets=`);
 * - those two and `config` are "managed by felis" and cannot be renamed or moved.
 * The guarded paths are looked up through the root, following links inside it; a missing file
 * guards nothing.
 *
 * @module
 */
import { clean } from './pathutil.ts';
import { type Identity, sameIdentity, type WorldRoot } from './root.ts';

export const SECRET_PATH = 'config/paper-global.yml';
export const PROPERTIES_PATH = 'server.properties';
/** Names that cannot be renamed or moved. */
export const RENAME_GUARDED = [SECRET_PATH, 'config', PROPERTIES_PATH] as const;

export const REDACTED = '<redacted by felis>';
const REDACTED_KEYS = ['rcon.password', 'forwarding-secrets'] as const;

/** The read pre-check: the cleaned name is the secret file (before any open). */
export function isSecretName(name: string): boolean {
  return clean(name) === SECRET_PATH;
}

export function secretMessage(name: string): string {
  return `${name} holds the proxy forwarding secret; the editor does not open it`;
}

export function managedMessage(name: string): string {
  return `${name} is managed by felis and cannot be renamed or moved`;
}

/** Identity of the withheld secret file (links followed), or null when there is none. */
export function secretIdentity(root: WorldRoot): Identity | null {
  return root.identity(SECRET_PATH, true);
}

/** Identity of the root server.properties (links followed), or null when there is none. */
export function propertiesIdentity(root: WorldRoot): Identity | null {
  return root.identity(PROPERTIES_PATH, true);
}

/**
 * Every identity a rename source must not have: each guarded path both as itself (lstat: the link
 * when it is one) and as its target (stat), so renaming a guarded link or its real target is refused.
 */
export function renameGuardIdentities(root: WorldRoot): Identity[] {
  const out: Identity[] = [];
  for (const p of RENAME_GUARDED) {
    for (const follow of [false, true]) {
      const id = root.identity(p, follow);
      if (id) out.push(id);
    }
  }
  return out;
}

export function isGuarded(id: Identity, guarded: Identity[]): boolean {
  return guarded.some((g) => sameIdentity(g, id));
}

/** Leading whitespace as Go's strings.TrimSpace sees it (unicode.IsSpace), plus a BOM (U+FEFF). */
const LEADING_SPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+/;

/**
 * Redacts a server.properties: lines are split on `\n`; a line whose trimmed text starts with
 * `rcon.password=` or `forwarding-secrets=` becomes `<key>=<redacted by felis>` (no leading
 * whitespace, no CR); every other line is kept byte for byte; lines are rejoined with `\n`.
 */
export function redactProperties(bytes: Buffer): Buffer {
  return joinLines(splitLines(bytes).map(redactLine));
}

/** The redacted key a line sets, with where its value starts in the line's bytes; null for any other line. */
function redactedKeyOf(line: Buffer): { key: string; value: number } | null {
  // Only the start of the line decides; invalid UTF-8 decodes to U+FFFD, which is not a space.
  const decoded = line.toString('utf8');
  const lead = LEADING_SPACE.exec(decoded)?.[0] ?? '';
  const text = decoded.slice(lead.length);
  for (const key of REDACTED_KEYS) {
    // The leading spaces are valid UTF-8, so their decoded length in bytes is their length in the line.
    if (text.startsWith(`${key}=`)) return { key, value: Buffer.byteLength(lead) + key.length + 1 };
  }
  return null;
}

function redactLine(line: Buffer): Buffer {
  const k = redactedKeyOf(line);
  return k ? Buffer.from(`${k.key}=${REDACTED}`) : line;
}

function splitLines(bytes: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  for (;;) {
    const nl = bytes.indexOf(0x0a, start);
    lines.push(bytes.subarray(start, nl < 0 ? bytes.length : nl));
    if (nl < 0) return lines;
    start = nl + 1;
  }
}

const CR = 0x0d;
const REDACTED_BYTES = Buffer.from(REDACTED);
const PLACEHOLDER = Buffer.from(`=${REDACTED}`);

function withoutCr(b: Buffer): Buffer {
  return b.length > 0 && b[b.length - 1] === CR ? b.subarray(0, -1) : b;
}

/** Could these bytes hold a placeholder line at all? A cheap test before any line is looked at. */
export function mayHoldPlaceholder(bytes: Buffer): boolean {
  return bytes.includes(PLACEHOLDER);
}

/**
 * New content for the root server.properties with every redacted value put back. A placeholder
 * line is `<key>=<redacted by felis>` for a redacted key (leading whitespace and a final CR
 * allowed); its value is the one that key has in `disk` (the file's bytes now; its last line for
 * the key, as Java's Properties reads it). A placeholder line exactly as a read shows it becomes
 * that disk line byte for byte (its own leading whitespace and CR), so a read sent back unchanged
 * writes the very bytes on disk; one the caller framed differently keeps its framing around the
 * value. Every other line is kept byte for byte. `unknown` names a key that has a placeholder but
 * no value on disk (or no file): writing the placeholder itself would set a password everybody can
 * read in this source.
 */
export function keepRedactedValues(disk: Buffer | null, sent: Buffer): { bytes: Buffer } | { unknown: string } {
  if (!mayHoldPlaceholder(sent)) return { bytes: sent };
  const onDisk = new Map<string, { line: Buffer; value: Buffer }>();
  for (const line of disk ? splitLines(disk) : []) {
    const k = redactedKeyOf(line);
    if (k) onDisk.set(k.key, { line, value: withoutCr(line.subarray(k.value)) });
  }
  const out: Buffer[] = [];
  let changed = false;
  for (const line of splitLines(sent)) {
    const k = redactedKeyOf(line);
    if (!k || !withoutCr(line.subarray(k.value)).equals(REDACTED_BYTES)) {
      out.push(line);
      continue;
    }
    const kept = onDisk.get(k.key);
    if (kept === undefined) return { unknown: k.key };
    if (line.equals(Buffer.from(`${k.key}=${REDACTED}`))) out.push(kept.line);
    else out.push(Buffer.concat([line.subarray(0, k.value), kept.value, line.subarray(k.value + REDACTED_BYTES.length)]));
    changed = true;
  }
  if (!changed) return { bytes: sent };
  return { bytes: joinLines(out) };
}

function joinLines(lines: Buffer[]): Buffer {
  const parts: Buffer[] = [];
  lines.forEach((l, i) => {
    if (i > 0) parts.push(Buffer.from('\n'));
    parts.push(l);
  });
  return Buffer.concat(parts);
}

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
import { sameIdentity, type Identity, type WorldRoot } from './root.ts';

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
  const out: Buffer[] = [];
  let start = 0;
  for (;;) {
    const nl = bytes.indexOf(0x0a, start);
    const line = bytes.subarray(start, nl < 0 ? bytes.length : nl);
    out.push(redactLine(line));
    if (nl < 0) break;
    start = nl + 1;
  }
  const joined: Buffer[] = [];
  out.forEach((l, i) => {
    if (i > 0) joined.push(Buffer.from('\n'));
    joined.push(l);
  });
  return Buffer.concat(joined);
}

function redactLine(line: Buffer): Buffer {
  // Only the start of the line decides; invalid UTF-8 decodes to U+FFFD, which is not a space.
  const text = line.toString('utf8').replace(LEADING_SPACE, '');
  for (const key of REDACTED_KEYS) {
    if (text.startsWith(`${key}=`)) return Buffer.from(`${key}=${REDACTED}`);
  }
  return line;
}

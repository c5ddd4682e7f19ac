/**
 * Signed download URLs: stateless tickets any function instance can check. A ticket is
 * `<payload>.<signature>`, both base64url: the payload is the JSON of what the holder may
 * download (namespace, server, path, file or folder, expiry in Unix seconds) and who signed it
 * (`a`, absent from tickets signed before it was recorded), the signature its
 * HMAC-SHA256 under a key derived from the shared job key for this purpose alone, so that a
 * download signature can never be taken for a Job token or the other way round (Job tokens are
 * HMACs of Job names, which cannot contain the purpose string's spaces).
 *
 * Checked in this order: shape and size, then the signature (constant time), then the payload,
 * then the namespace, and only then the expiry, so nobody learns anything about a ticket that was
 * not signed here.
 * @module
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const PURPOSE = 'felis-world download url v1';
/** A ticket longer than this was not made here (a 4 KiB path and its envelope fit well below). */
export const MAX_TICKET_CHARS = 8192;

export interface DownloadClaims {
  namespace: string;
  server: string;
  path: string;
  dir: boolean;
  /** Unix seconds. */
  expires: number;
  /**
   * Who signed it (the actor's name), so the download is audited under them. Tickets signed
   * before this was recorded carry none; they stay valid until they expire.
   */
  signer?: string;
}

export type Verdict = { ok: true; claims: DownloadClaims } | { ok: false; why: 'invalid' | 'expired' };

/** The signing key for download URLs, derived from the shared job key. */
export function downloadKey(jobKey: Buffer): Buffer {
  return createHmac('sha256', jobKey).update(PURPOSE).digest();
}

const mac = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest();

export function signTicket(key: Buffer, c: DownloadClaims): string {
  const payload = Buffer.from(JSON.stringify({ n: c.namespace, s: c.server, p: c.path, d: c.dir ? 1 : 0, e: c.expires, ...(c.signer !== undefined ? { a: c.signer } : {}) })).toString('base64url');
  return `${payload}.${mac(key, payload).toString('base64url')}`;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

export function verifyTicket(key: Buffer, ticket: string, namespace: string, nowMs: number): Verdict {
  const invalid: Verdict = { ok: false, why: 'invalid' };
  if (ticket.length > MAX_TICKET_CHARS) return invalid;
  const dot = ticket.indexOf('.');
  if (dot <= 0 || dot !== ticket.lastIndexOf('.')) return invalid;
  const payload = ticket.slice(0, dot);
  const sig = ticket.slice(dot + 1);
  if (!B64URL.test(payload) || !B64URL.test(sig)) return invalid;
  const given = Buffer.from(sig, 'base64url');
  const want = mac(key, payload);
  // Canonical encoding only: a signature with other trailing bits is not the one made here.
  if (given.length !== want.length || given.toString('base64url') !== sig || !timingSafeEqual(given, want)) return invalid;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return invalid;
  }
  const o = v as Record<string, unknown>;
  if (
    typeof o !== 'object' ||
    o === null ||
    typeof o.n !== 'string' ||
    typeof o.s !== 'string' ||
    typeof o.p !== 'string' ||
    (o.d !== 0 && o.d !== 1) ||
    typeof o.e !== 'number' ||
    !Number.isSafeInteger(o.e) ||
    (o.a !== undefined && typeof o.a !== 'string')
  ) {
    return invalid;
  }
  if (o.n !== namespace) return invalid;
  if (o.e * 1000 <= nowMs) return { ok: false, why: 'expired' };
  return { ok: true, claims: { namespace: o.n, server: o.s, path: o.p, dir: o.d === 1, expires: o.e, ...(typeof o.a === 'string' ? { signer: o.a } : {}) } };
}

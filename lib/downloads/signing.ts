/**
 * Signed download URLs: stateless tickets any function instance can check. A ticket is
 * `<payload>.<signature>` (lib/auth/tickets.ts, the `download` purpose): the payload is the JSON of
 * what the holder may download (namespace, server, path, file or folder, expiry in Unix seconds)
 * and who signed it (`a`, absent from tickets signed before it was recorded). Its key and payload
 * are what they were before upload tickets existed, so a download URL signed then still opens;
 * an upload ticket fails here twice over (another key, and a purpose in its payload).
 *
 * Checked in this order: shape and size, then the signature (constant time), then the payload,
 * then the namespace, and only then the expiry, so nobody learns anything about a ticket that was
 * not signed here.
 * @module
 */
import { MAX_TICKET_CHARS, openTicket, signClaims, ticketKey } from '../auth/tickets.ts';

export { MAX_TICKET_CHARS };

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

/** The signing key for download URLs, derived from the shared job key (lib/auth/tickets.ts). */
export function downloadKey(jobKey: Buffer): Buffer {
  return ticketKey(jobKey, 'download');
}

export function signTicket(key: Buffer, c: DownloadClaims): string {
  return signClaims(key, { n: c.namespace, s: c.server, p: c.path, d: c.dir ? 1 : 0, e: c.expires, ...(c.signer !== undefined ? { a: c.signer } : {}) });
}

export function verifyTicket(key: Buffer, ticket: string, namespace: string, nowMs: number): Verdict {
  const invalid: Verdict = { ok: false, why: 'invalid' };
  const o = openTicket(key, ticket);
  // A download payload names no purpose (`k`): the upload's does, so it is never taken for one here.
  if (o === undefined || o.k !== undefined) return invalid;
  if (
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

/**
 * Purpose-scoped signed tickets: the credential of a URL that carries no bearer (a download, an
 * upload). A ticket is `<payload>.<signature>`, both base64url: the payload is a JSON object of
 * claims, the signature its HMAC-SHA256 under a key derived from the shared job key for one purpose
 * alone. The purpose is in the key, so a ticket signed for one purpose never verifies for another
 * (a download ticket opens no upload, an upload ticket no download); the caller's claims check adds
 * the purpose in the payload on top. Job tokens are HMACs of Job names, which cannot contain the
 * purpose strings' spaces, so no ticket is ever a Job token either.
 *
 * `openTicket` checks shape and size, then the signature (constant time), then that the payload is
 * a JSON object; the caller then checks the claims, the namespace, and only last the expiry, so
 * nobody learns anything about a ticket that was not signed here.
 * @module
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Each purpose's key-derivation string. The download one is what download tickets were always signed under. */
const PURPOSES = {
  download: 'felis-world download url v1',
  upload: 'felis-world upload url v1',
} as const;

export type TicketPurpose = keyof typeof PURPOSES;

/** A ticket longer than this was not made here (a 4 KiB path and its envelope fit well below). */
export const MAX_TICKET_CHARS = 8192;

/** The signing key of one purpose, derived from the shared job key. */
export function ticketKey(jobKey: Buffer, purpose: TicketPurpose): Buffer {
  return createHmac('sha256', jobKey).update(PURPOSES[purpose]).digest();
}

const mac = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest();

export function signClaims(key: Buffer, claims: Record<string, unknown>): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${mac(key, payload).toString('base64url')}`;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

/** The payload of a ticket signed under `key`, or undefined when it was not (or is no JSON object). */
export function openTicket(key: Buffer, ticket: string): Record<string, unknown> | undefined {
  if (ticket.length > MAX_TICKET_CHARS) return undefined;
  const dot = ticket.indexOf('.');
  if (dot <= 0 || dot !== ticket.lastIndexOf('.')) return undefined;
  const payload = ticket.slice(0, dot);
  const sig = ticket.slice(dot + 1);
  if (!B64URL.test(payload) || !B64URL.test(sig)) return undefined;
  const given = Buffer.from(sig, 'base64url');
  const want = mac(key, payload);
  // Canonical encoding only: a signature with other trailing bits is not the one made here.
  if (given.length !== want.length || given.toString('base64url') !== sig || !timingSafeEqual(given, want)) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/**
 * Signed upload URLs' tickets (docs/uploads.md, *Signed upload URLs*): stateless, under the
 * `upload` purpose of lib/auth/tickets.ts, so a download ticket never verifies here and an upload
 * ticket never opens a download. The payload: `k: "upload"` (the purpose again, beside the key's),
 * namespace, server, path, overwrite, parents, expiry (Unix seconds), the signer, and a nonce.
 *
 * The nonce makes the ticket single-use without any state in a function: the first use creates the
 * receiver Job whose name is derived from it (`claimOpId`), and a second use's create of the same
 * name is refused by the API server (409 AlreadyExists). That Job is kept at least until the ticket
 * expires (`claimKeepSeconds`), so it cannot be garbage-collected while the ticket still verifies.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { openTicket, signClaims, ticketKey } from '../auth/tickets.ts';
import { domainError } from '../errors.ts';
import { readKey } from '../protocol/job-token.ts';

/** The longest an upload URL may be valid: the bound. */
export const MAX_UPLOAD_URL_SECONDS = 900;

export interface UploadClaims {
  namespace: string;
  server: string;
  /** The file (PUT) or the folder (multipart POST) the URL writes into. */
  path: string;
  overwrite: boolean;
  parents: boolean;
  /** Unix seconds. */
  expires: number;
  /** Who signed it: the upload acts and is audited as them. */
  signer: string;
  /** 32 hex: names the Job that claims the ticket. */
  nonce: string;
}

export type UploadVerdict = { ok: true; claims: UploadClaims } | { ok: false; why: 'invalid' | 'expired' };

const NONCE = /^[0-9a-f]{32}$/;

export function uploadKey(jobKey: Buffer): Buffer {
  return ticketKey(jobKey, 'upload');
}

export function signUploadTicket(key: Buffer, c: UploadClaims): string {
  return signClaims(key, { k: 'upload', n: c.namespace, s: c.server, p: c.path, o: c.overwrite ? 1 : 0, r: c.parents ? 1 : 0, e: c.expires, a: c.signer, x: c.nonce });
}

export function verifyUploadTicket(key: Buffer, ticket: string, namespace: string, nowMs: number): UploadVerdict {
  const invalid: UploadVerdict = { ok: false, why: 'invalid' };
  const o = openTicket(key, ticket);
  if (o === undefined || o.k !== 'upload') return invalid;
  if (
    typeof o.n !== 'string' ||
    typeof o.s !== 'string' ||
    typeof o.p !== 'string' ||
    (o.o !== 0 && o.o !== 1) ||
    (o.r !== 0 && o.r !== 1) ||
    typeof o.e !== 'number' ||
    !Number.isSafeInteger(o.e) ||
    typeof o.a !== 'string' ||
    typeof o.x !== 'string' ||
    !NONCE.test(o.x)
  ) {
    return invalid;
  }
  if (o.n !== namespace) return invalid;
  if (o.e * 1000 <= nowMs) return { ok: false, why: 'expired' };
  return { ok: true, claims: { namespace: o.n, server: o.s, path: o.p, overwrite: o.o === 1, parents: o.r === 1, expires: o.e, signer: o.a, nonce: o.x } };
}

/** The op id of the receiver Job that claims a ticket: the same for every use of it. */
export function claimOpId(nonce: string): string {
  return `u${nonce.slice(0, 15)}`;
}

/**
 * How long the claiming Job must be kept after it ends: until the ticket expires (it ends after it
 * starts, which is after `nowSeconds`), plus a minute for a controller whose clock runs behind.
 */
export function claimKeepSeconds(expires: number, nowSeconds: number): number {
  return Math.max(0, expires - nowSeconds) + 60;
}

export interface UploadUrlConfig {
  keyFile: string;
  namespace: string;
  /** How long a signed URL stays valid (at most MAX_UPLOAD_URL_SECONDS). */
  urlSeconds: number;
  /** The origin put in front of the URL (FELIS_DOWNLOAD_BASE_URL); none: origin-relative. */
  baseUrl?: string;
}

export interface UploadUrlOptions {
  key?: Buffer;
  now?: () => number;
  nonce?: () => string;
}

export interface UploadUrlAsk {
  server: string;
  path: string;
  overwrite: boolean;
  parents: boolean;
  signer: string;
}

/** Signs and checks upload tickets; nothing is stored. */
export class UploadUrls {
  readonly #cfg: UploadUrlConfig;
  readonly #now: () => number;
  readonly #nonce: () => string;
  #jobKey: Buffer | undefined;

  constructor(cfg: UploadUrlConfig, o: UploadUrlOptions = {}) {
    if (cfg.urlSeconds < 1 || cfg.urlSeconds > MAX_UPLOAD_URL_SECONDS) throw new Error(`an upload URL is valid 1 to ${MAX_UPLOAD_URL_SECONDS} s, not ${cfg.urlSeconds}`);
    this.#cfg = cfg;
    this.#now = o.now ?? Date.now;
    this.#nonce = o.nonce ?? (() => randomBytes(16).toString('hex'));
    this.#jobKey = o.key;
  }

  get config(): UploadUrlConfig {
    return this.#cfg;
  }

  #key(): Buffer {
    if (!this.#jobKey) {
      try {
        this.#jobKey = readKey(this.#cfg.keyFile);
      } catch {
        throw domainError('files_unavailable', 'uploads are not available: the job key cannot be read');
      }
    }
    return this.#jobKey;
  }

  sign(a: UploadUrlAsk): { ticket: string; expiresAt: Date } {
    const expires = Math.floor(this.#now() / 1000) + this.#cfg.urlSeconds;
    const ticket = signUploadTicket(uploadKey(this.#key()), { namespace: this.#cfg.namespace, ...a, expires, nonce: this.#nonce() });
    return { ticket, expiresAt: new Date(expires * 1000) };
  }

  /**
   * The claims of a ticket. One not signed here for uploads (a download ticket included) is 404
   * not_found, as a download's is; an expired one 410 upload_url_expired.
   */
  verify(ticket: string): UploadClaims {
    const v = verifyUploadTicket(uploadKey(this.#key()), ticket, this.#cfg.namespace, this.#now());
    if (v.ok) return v.claims;
    if (v.why === 'expired') throw domainError('upload_url_expired', 'this upload link has expired; ask for a new one');
    throw domainError('not_found', 'no such upload link');
  }

  /** Now, in Unix seconds, on this instance's clock. */
  nowSeconds(): number {
    return Math.floor(this.#now() / 1000);
  }
}

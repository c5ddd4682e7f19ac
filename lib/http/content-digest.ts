/**
 * `Content-Digest` (RFC 9530) as the upload routes read it: the SHA-256 a raw body must hash to,
 * checked before any lock or Job. Every header value is split on `,`; of the members whose key is
 * `sha-256` (trimmed, any case) the last wins, other algorithms are ignored. A member's value, its
 * `;params` dropped, must be `:<standard base64>:` decoding to exactly 32 bytes.
 * @module
 */
import { ApiError } from './envelope.ts';

const B64 = /^:([A-Za-z0-9+/]*={0,2}):$/;

/** The digest's 32 bytes, or the caller's error: 400 `digest_required` or `bad_digest`. */
export function parseContentDigest(values: readonly string[]): Buffer {
  let last: string | undefined;
  for (const v of values) {
    for (const member of v.split(',')) {
      const eq = member.indexOf('=');
      if (eq < 0) continue;
      if (member.slice(0, eq).trim().toLowerCase() !== 'sha-256') continue;
      last = member.slice(eq + 1);
    }
  }
  if (last === undefined) throw new ApiError(400, 'digest_required', 'a Content-Digest header with a sha-256 member is required');
  const semi = last.indexOf(';');
  const value = (semi < 0 ? last : last.slice(0, semi)).trim();
  const m = B64.exec(value);
  // Standard base64 of 32 bytes is 44 characters with one `=`; anything else is not a SHA-256.
  const bytes = m && m[1]!.length % 4 === 0 ? Buffer.from(m[1]!, 'base64') : undefined;
  if (bytes?.length !== 32 || bytes.toString('base64') !== m![1]) {
    throw new ApiError(400, 'bad_digest', 'the Content-Digest sha-256 value must be :<base64 of 32 bytes>:');
  }
  return bytes;
}

/** Every `Content-Digest` value of a request (a Fetch Headers joins repeated ones with `, `). */
export function contentDigestValues(headers: Headers): string[] {
  const v = headers.get('content-digest');
  return v === null ? [] : [v];
}

/** `sha-256=:<base64>:` for bytes whose digest is `hex` (tests and clients). */
export function contentDigestHeader(hex: string): string {
  return `sha-256=:${Buffer.from(hex, 'hex').toString('base64')}:`;
}

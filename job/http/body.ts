/**
 * Request bodies as the serving modes bound them: refused unread when a request should carry none,
 * read whole up to a limit when it carries a small one. (Uploads stream theirs to their mode.)
 * @module
 */
import type http from 'node:http';

/** Does the request carry a body (a length other than 0, or a chunked one)? */
export function carriesBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return Boolean((length && length !== '0') || req.headers['transfer-encoding']);
}

/** The whole body, or undefined past `max` bytes (the rest is not read). */
export function readBody(req: http.IncomingMessage, max: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > max) {
      req.resume();
      return resolve(undefined);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        req.destroy();
        resolve(undefined);
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

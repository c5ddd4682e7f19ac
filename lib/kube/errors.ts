/**
 * Reading Kubernetes errors as client-node 2.x surfaces them: `ApiException.body` is the raw
 * response text (a Status JSON, or undefined for 401 and for the log helper), never an object.
 * @module
 */
// The class alone (a few lines), not the package index: importing the index would put all of
// client-node on every function's start-up path. Same module file, so `instanceof` still holds.
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';

export interface KubeStatus {
  code: number;
  reason?: string;
  message?: string;
}

/** The HTTP code and Status of a client-node error, or undefined for a non-API error. */
export function kubeStatus(err: unknown): KubeStatus | undefined {
  if (!(err instanceof ApiException)) return undefined;
  const code = Number(err.code);
  const body: unknown = err.body;
  if (typeof body === 'string' && body !== '') {
    try {
      const s = JSON.parse(body) as { reason?: string; message?: string };
      return { code, reason: s.reason, message: s.message };
    } catch {
      return { code, message: body };
    }
  }
  if (body && typeof body === 'object') {
    const s = body as { reason?: string; message?: string };
    return { code, reason: s.reason, message: s.message };
  }
  return { code };
}

export const isNotFound = (err: unknown): boolean => kubeStatus(err)?.code === 404;
export function isConflict(err: unknown): boolean {
  const s = kubeStatus(err);
  return s?.code === 409 && s.reason === 'Conflict';
}

/** A create refused because an object of that name exists (409 AlreadyExists, not a write conflict). */
export function isAlreadyExists(err: unknown): boolean {
  const s = kubeStatus(err);
  return s?.code === 409 && s.reason === 'AlreadyExists';
}

/** A one-line description for logs: never sent to a caller. */
export function describeKubeError(err: unknown): string {
  const s = kubeStatus(err);
  if (s) return `kubernetes ${s.code}${s.reason ? ' ' + s.reason : ''}${s.message ? ': ' + s.message : ''}`;
  return err instanceof Error ? err.message : String(err);
}

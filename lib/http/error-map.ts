/**
 * Domain errors as HTTP: the file editor's result codes and maintenance's refusals, each with one
 * status and envelope code. Anything not listed is a 500 whose detail stays in the server log.
 * @module
 */
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ArchiveNameError } from '../files/archive-names.ts';
import { EDIT_ERRORS, FileEditError, ReadDamagedError, WriteNotDeliveredError } from '../files/errors.ts';
import {
  LockFreshError,
  LockProtectedError,
  MaintenanceBusyError,
  NotStoppedError,
  NoWorldVolumeError,
  ServerNotFoundError,
} from '../maintenance/errors.ts';
import { FilesTimeoutError } from '../runner/errors.ts';

export interface Mapped {
  status: ContentfulStatusCode;
  code: string;
  message: string;
}

export function mapDomainError(err: unknown): Mapped | undefined {
  if (err instanceof FileEditError) {
    const e = EDIT_ERRORS[err.kind];
    return { status: e.status, code: e.code, message: err.message };
  }
  if (err instanceof ArchiveNameError) return { status: 400, code: 'bad_path', message: err.message };
  if (err instanceof ReadDamagedError) return { status: 502, code: 'read_damaged', message: err.message };
  if (err instanceof FilesTimeoutError) {
    return { status: 504, code: 'files_timeout', message: 'the file operation did not finish in time; retry shortly' };
  }
  if (err instanceof WriteNotDeliveredError) {
    return { status: 504, code: 'write_not_delivered', message: "the write's file Job could not take its content in time; nothing was written, retry shortly" };
  }
  if (err instanceof MaintenanceBusyError) return { status: 409, code: 'maintenance_in_progress', message: err.message };
  if (err instanceof NotStoppedError) return { status: 409, code: 'not_stopped', message: err.message };
  if (err instanceof NoWorldVolumeError) return { status: 409, code: 'no_world_volume', message: err.message };
  if (err instanceof LockProtectedError) return { status: 409, code: 'lock_protected', message: err.message };
  if (err instanceof LockFreshError) return { status: 409, code: 'lock_fresh', message: err.message };
  if (err instanceof ServerNotFoundError) return { status: 404, code: 'not_found', message: 'no such server' };
  return undefined;
}

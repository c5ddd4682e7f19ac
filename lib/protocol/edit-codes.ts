/**
 * The file Job's refusal codes as a caller meets them: the envelope code (three are renamed, so
 * one client handles the sync and the background routes the same way), what sort of refusal it
 * is, and the text its message is when the Job gave none.
 * @module
 */
import type { ErrorCode, ErrorKind } from '../errors.ts';

export const EDIT_ERRORS = {
  not_found: { code: 'not_found', kind: 'not_found', text: 'no such file or directory' },
  bad_path: { code: 'bad_path', kind: 'invalid', text: 'path is not accessible' },
  bad_name: { code: 'bad_name', kind: 'invalid', text: 'the name cannot be a file name' },
  too_large: { code: 'too_large', kind: 'too_large', text: 'file is too large' },
  conflict: { code: 'file_changed', kind: 'conflict', text: 'file changed since it was opened' },
  no_space: { code: 'volume_full', kind: 'no_space', text: 'the server volume is full' },
  exists: { code: 'file_exists', kind: 'conflict', text: 'file already exists' },
  digest_mismatch: { code: 'digest_mismatch', kind: 'invalid', text: 'content does not match its sha256' },
  withheld_linked: { code: 'withheld_linked', kind: 'conflict', text: 'the proxy forwarding secret has other hard links; delete them first' },
  redacted_value_unknown: { code: 'redacted_value_unknown', kind: 'conflict', text: 'a redacted value has no value on disk to keep' },
  batch_conflict: { code: 'batch_conflict', kind: 'conflict', text: 'two items of the batch clash' },
  trash_not_found: { code: 'trash_not_found', kind: 'not_found', text: 'no such trash record' },
  gzip_invalid: { code: 'gzip_invalid', kind: 'invalid', text: 'the file is not readable gzip data' },
} as const satisfies Record<string, { code: ErrorCode; kind: ErrorKind; text: string }>;

export type EditErrorKind = keyof typeof EDIT_ERRORS;

export function isEditErrorKind(code: string): code is EditErrorKind {
  return Object.hasOwn(EDIT_ERRORS, code);
}

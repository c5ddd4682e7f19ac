/**
 * `Status` error bodies exactly as kube-apiserver writes them, after
 * `staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go` and
 * `staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go`.
 *
 * Field order in the JSON follows the Go struct order (kind, apiVersion, metadata, status, message,
 * reason, details, code), and empty `details` members are omitted as Go's `omitempty` does.
 *
 * @module
 */

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** A group and resource, as `schema.GroupResource`. */
export interface GroupResource {
  group: string;
  resource: string;
}

/** A group and kind, as `schema.GroupKind`. */
export interface GroupKind {
  group: string;
  kind: string;
}

/** `GroupResource.String()`: `jobs.batch`, but plain `pods` for the core group. */
export function grString(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

function gkString(gk: GroupKind): string {
  return gk.group ? `${gk.kind}.${gk.group}` : gk.kind;
}

/** An error that the API server turns into a `Status` reply. */
export class ApiError extends Error {
  readonly status: Status;
  /** Extra reply headers, e.g. `Retry-After`. */
  readonly headers: Record<string, string>;

  constructor(status: Status, headers: Record<string, string> = {}) {
    super(status.message ?? status.reason ?? `HTTP ${status.code}`);
    this.status = status;
    this.headers = headers;
  }

  get code(): number {
    return this.status.code;
  }
}

function details(d: StatusDetails): StatusDetails {
  const out: StatusDetails = {};
  if (d.name) out.name = d.name;
  if (d.group) out.group = d.group;
  if (d.kind) out.kind = d.kind;
  if (d.uid) out.uid = d.uid;
  if (d.causes && d.causes.length > 0) out.causes = d.causes;
  if (d.retryAfterSeconds) out.retryAfterSeconds = d.retryAfterSeconds;
  return out;
}

/** Builds a failure `Status` with the fields in Go order. */
export function failure(code: number, reason: string | undefined, message: string, d?: StatusDetails): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message } as Status;
  if (reason) s.reason = reason;
  if (d) s.details = details(d);
  s.code = code;
  return s;
}

export function notFound(gr: GroupResource, name: string): ApiError {
  return new ApiError(failure(404, 'NotFound', `${grString(gr)} "${name}" not found`, { name, group: gr.group, kind: gr.resource }));
}

export function namespaceNotFound(ns: string): ApiError {
  return notFound({ group: '', resource: 'namespaces' }, ns);
}

export function alreadyExists(gr: GroupResource, name: string): ApiError {
  return new ApiError(
    failure(409, 'AlreadyExists', `${grString(gr)} "${name}" already exists`, {
      name,
      group: gr.group,
      kind: gr.resource,
    }),
  );
}

export function generateNameConflict(gr: GroupResource, name: string): ApiError {
  return new ApiError(
    failure(409, 'AlreadyExists', `${grString(gr)} "${name}" already exists, the server was not able to generate a unique name for the object`, {
      name,
      group: gr.group,
      kind: gr.resource,
      retryAfterSeconds: 1,
    }),
  );
}

/** `OptimisticLockErrorMsg` in `apiserver/pkg/registry/generic/registry/store.go`. */
export const OPTIMISTIC_LOCK_ERROR_MSG = 'the object has been modified; please apply your changes to the latest version and try again';

export function conflict(gr: GroupResource, name: string, err: string): ApiError {
  return new ApiError(
    failure(409, 'Conflict', `Operation cannot be fulfilled on ${grString(gr)} "${name}": ${err}`, {
      name,
      group: gr.group,
      kind: gr.resource,
    }),
  );
}

export function forbidden(gr: GroupResource, name: string, err: string): ApiError {
  const message = name ? `${grString(gr)} "${name}" is forbidden: ${err}` : `${grString(gr)} is forbidden: ${err}`;
  return new ApiError(failure(403, 'Forbidden', message, { name, group: gr.group, kind: gr.resource }));
}

/** The exact 401 body; it has no `details`. */
export function unauthorized(): ApiError {
  return new ApiError(failure(401, 'Unauthorized', 'Unauthorized'));
}

export function badRequest(message: string): ApiError {
  return new ApiError(failure(400, 'BadRequest', message));
}

export function methodNotAllowed(message: string): ApiError {
  return new ApiError(failure(405, 'MethodNotAllowed', message));
}

export function unsupportedMediaType(accepted: readonly string[]): ApiError {
  return new ApiError(failure(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`));
}

export function requestEntityTooLarge(limit: number): ApiError {
  return new ApiError(failure(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`));
}

export function internalError(err: string): ApiError {
  return new ApiError(failure(500, 'InternalError', `Internal error occurred: ${err}`, { causes: [{ message: err }] }));
}

/** The 404 for a path the server does not serve. */
export function pathNotFound(): ApiError {
  return new ApiError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server could not find the requested resource',
    reason: 'NotFound',
    details: {},
    code: 404,
  });
}

/**
 * `NewGenericServerResponse` for the codes we use it with: the message is a fixed sentence per code
 * and `details` is present but empty (e.g. the 422 for a failed JSON-patch operation).
 */
export function genericServerResponse(code: number): ApiError {
  const table: Record<number, [string, string]> = {
    409: ['Conflict', 'the server reported a conflict'],
    422: ['Invalid', 'the server rejected our request due to an error in our request'],
  };
  const [reason, message] = table[code] ?? ['Unknown', `the server responded with the status code ${code} but did not return more information`];
  return new ApiError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    details: {},
    code,
  });
}

// ---- field errors (`field.Error`) ----

export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError';

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
};

/** A validation error on one field; `value` is already rendered the way Go prints it. */
export interface FieldError {
  type: FieldErrorType;
  field: string;
  /** Rendered bad value (`"abc"`, `-1`, `0x0`, `core.PodTemplateSpec{…}`); absent when omitted. */
  value?: string;
  detail: string;
}

/** Renders a value as `field.Error.ErrorBody` does: strings quoted, numbers and booleans bare. */
export function goValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[]string{${v.map((x) => JSON.stringify(String(x))).join(', ')}}`;
  return `map[string]string{${Object.entries(v as Record<string, unknown>)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, x]) => `${JSON.stringify(k)}:${JSON.stringify(String(x))}`)
    .join(', ')}}`;
}

export const fieldErr = {
  invalid(field: string, value: unknown, detail: string): FieldError {
    return { type: 'FieldValueInvalid', field, value: goValue(value), detail };
  },
  /** Invalid with a pre-rendered value (e.g. a Go struct dump or `0x0`). */
  invalidRaw(field: string, rendered: string, detail: string): FieldError {
    return { type: 'FieldValueInvalid', field, value: rendered, detail };
  },
  required(field: string, detail = ''): FieldError {
    return { type: 'FieldValueRequired', field, detail };
  },
  notSupported(field: string, value: unknown, supported: readonly string[]): FieldError {
    return {
      type: 'FieldValueNotSupported',
      field,
      value: goValue(value),
      detail: `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
    };
  },
  notFound(field: string, value: unknown): FieldError {
    return { type: 'FieldValueNotFound', field, value: goValue(value), detail: '' };
  },
  duplicate(field: string, value: unknown): FieldError {
    return { type: 'FieldValueDuplicate', field, value: goValue(value), detail: '' };
  },
  forbidden(field: string, detail: string): FieldError {
    return { type: 'FieldValueForbidden', field, detail };
  },
  tooLong(field: string, max: number): FieldError {
    return { type: 'FieldValueTooLong', field, detail: `must have at most ${max} bytes` };
  },
};

/** `field.Error.ErrorBody()`. */
export function errorBody(e: FieldError): string {
  let s = TYPE_TEXT[e.type];
  const omitsValue = e.type === 'FieldValueRequired' || e.type === 'FieldValueForbidden' || e.type === 'FieldValueTooLong' || e.type === 'InternalError' || e.value === undefined;
  if (!omitsValue) s += `: ${e.value}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/** `field.Error.Error()`. */
export function fieldErrorString(e: FieldError): string {
  return `${e.field}: ${errorBody(e)}`;
}

/** `ErrorList.ToAggregate().Error()`: duplicates dropped, several wrapped in `[…]`. */
export function aggregate(errs: readonly FieldError[]): string {
  const seen = new Set<string>();
  const msgs: string[] = [];
  for (const e of errs) {
    const m = fieldErrorString(e);
    if (seen.has(m)) continue;
    seen.add(m);
    msgs.push(m);
  }
  return msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
}

/**
 * `NewInvalid`: `<Kind>.<group> "<name>" is invalid: <aggregate>`; causes keep duplicates.
 * `details.kind` is the Kind here, not the plural.
 */
export function invalid(gk: GroupKind, name: string, errs: readonly FieldError[]): ApiError {
  const message = errs.length === 0 ? `${gkString(gk)} "${name}" is invalid` : `${gkString(gk)} "${name}" is invalid: ${aggregate(errs)}`;
  return new ApiError(
    failure(422, 'Invalid', message, {
      name,
      group: gk.group,
      kind: gk.kind,
      causes: errs.map((e) => ({ reason: e.type, message: errorBody(e), field: e.field })),
    }),
  );
}

/** Default reason per code, for injected faults. */
export function reasonForCode(code: number): string | undefined {
  const table: Record<number, string> = {
    400: 'BadRequest',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'NotFound',
    405: 'MethodNotAllowed',
    409: 'Conflict',
    410: 'Expired',
    413: 'RequestEntityTooLarge',
    415: 'UnsupportedMediaType',
    422: 'Invalid',
    429: 'TooManyRequests',
    500: 'InternalError',
    503: 'ServiceUnavailable',
    504: 'Timeout',
  };
  return table[code];
}

/**
 * What a request to the emulated apiserver is about, read from its method, path and query the way
 * `RequestInfoFactory` reads it, plus the query-parameter conversions the handlers share. Pure: no
 * I/O, so the API server and the counting proxy of the cluster tier use the same reading.
 *
 * @module
 */

import { badRequest } from './errors.ts';

/**
 * The bearer token of a request, as the apiserver's bearer-token authenticator splits the header
 * (`<scheme> <token>` on single spaces); undefined when there is none, which makes the request
 * anonymous rather than unauthorized.
 */
export function bearerToken(header: string | undefined): string | undefined {
  const parts = (header ?? '').trim().split(' ');
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer' || parts[1] === '') return undefined;
  return parts[1];
}

export interface RequestInfo {
  resourceRequest: boolean;
  path: string;
  verb: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

/** `RequestInfoFactory.NewRequestInfo`, for the paths we serve. */
export function requestInfo(method: string, url: URL): RequestInfo {
  const path = url.pathname;
  const parts = path.split('/').filter(Boolean);
  const info: RequestInfo = {
    resourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    info.apiVersion = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    info.apiGroup = parts[1]!;
    info.apiVersion = parts[2]!;
    rest = parts.slice(3);
  } else {
    return info;
  }
  info.resourceRequest = true;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    info.namespace = rest[1]!;
    info.resource = rest[2]!;
    info.name = rest[3] ?? '';
    info.subresource = rest[4] ?? '';
    if (rest.length > 5) info.subresource = rest.slice(4).join('/');
  } else if (rest[0] === 'namespaces') {
    info.resource = 'namespaces';
    info.name = rest[1] ?? '';
    info.namespace = info.name;
  } else {
    info.resource = rest[0]!;
    info.name = rest[1] ?? '';
    info.subresource = rest[2] ?? '';
  }
  const watch = ['true', '1'].includes(url.searchParams.get('watch') ?? '');
  switch (method) {
    case 'GET':
    case 'HEAD':
      info.verb = info.name ? 'get' : watch ? 'watch' : 'list';
      break;
    case 'POST':
      info.verb = 'create';
      break;
    case 'PUT':
      info.verb = 'update';
      break;
    case 'PATCH':
      info.verb = 'patch';
      break;
    case 'DELETE':
      info.verb = info.name ? 'delete' : 'deletecollection';
      break;
    default:
      info.verb = method.toLowerCase();
  }
  return info;
}

export function parseIntParam(v: string | null, allowNegative = true): number | undefined {
  if (v === null || v === '') return undefined;
  if (!/^[+-]?\d+$/.test(v) || (!allowNegative && v.startsWith('-'))) {
    throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  }
  return Number(v);
}

/**
 * A boolean query parameter as the apiserver converts it into options (`runtime`'s
 * `Convert_Slice_string_To_bool`): absent is unset, `0` and `false` (any case) are false, and
 * anything else — `maybe`, even an empty value — is true. Never an error.
 */
export function parseBoolParam(v: string | null): boolean | undefined {
  if (v === null) return undefined;
  return !(v === '0' || v.toLowerCase() === 'false');
}

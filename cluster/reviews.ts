/**
 * The apiserver's delegated-auth endpoints, as a server like kube-rbac-proxy uses them:
 * `POST /apis/authentication.k8s.io/v1/tokenreviews` (who is this token, for which audiences; from
 * the token table) and `POST /apis/authorization.k8s.io/v1/subjectaccessreviews` (may this user do
 * this; from the RBAC engine). Both are create-only and cluster-scoped; the caller needs `create`
 * on them, as on a real apiserver (`system:auth-delegator`), which the caller of this module checks.
 *
 * @module
 */

import { badRequest, type FieldError, fieldErr, invalid, methodNotAllowed, pathNotFound } from './errors.ts';
import type { Attributes, Authenticator, RbacAuthorizer, UserInfo } from './rbac.ts';
import type { RequestInfo } from './request-info.ts';

type Any = any;

export const REVIEW_GROUPS = new Set(['authentication.k8s.io', 'authorization.k8s.io']);

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/**
 * The answer (201 and the review with its status) to a review request with body `body`;
 * `requester` is who sent it (a `selfsubjectaccessreviews` asks about them: `kubectl auth can-i`).
 */
export function review(info: RequestInfo, body: Any, authn: Authenticator, rbac: RbacAuthorizer, requester?: UserInfo): { code: number; body: unknown } {
  const which = `${info.apiGroup}/${info.apiVersion}/${info.resource}`;
  if (which === 'authorization.k8s.io/v1/selfsubjectaccessreviews' && requester && !info.namespace && !info.name && !info.subresource) {
    return selfReview(info, body, rbac, requester);
  }
  if (which !== 'authentication.k8s.io/v1/tokenreviews' && which !== 'authorization.k8s.io/v1/subjectaccessreviews') throw pathNotFound();
  if (info.namespace || info.name || info.subresource) throw pathNotFound();
  if (info.verb !== 'create') throw methodNotAllowed('the server does not allow this method on the requested resource');
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the review body must be a JSON object');
  const spec = (body.spec ?? {}) as Any;
  const out = { kind: info.resource === 'tokenreviews' ? 'TokenReview' : 'SubjectAccessReview', apiVersion: `${info.apiGroup}/v1`, metadata: { creationTimestamp: null }, spec };
  if (info.resource === 'tokenreviews') {
    if (typeof spec.token !== 'string' || spec.token === '') throw badRequest('token is required for TokenReview in authentication');
    const r = authn.review(spec.token, strings(spec.audiences));
    const status = r ? { authenticated: true, user: { username: r.user.name, groups: r.user.groups }, audiences: r.audiences } : { user: {}, error: 'invalid bearer token' };
    return { code: 201, body: { ...out, status } };
  }
  // The checks and their order are the apiserver's (ValidateSubjectAccessReviewSpec).
  const errs: FieldError[] = [];
  const user = typeof spec.user === 'string' ? spec.user : '';
  const groups = strings(spec.groups);
  const res = spec.resourceAttributes as Any;
  const non = spec.nonResourceAttributes as Any;
  if (res && non) {
    const q = (v: unknown) => JSON.stringify(typeof v === 'string' ? v : '');
    errs.push(
      fieldErr.invalidRaw('spec.nonResourceAttributes', `authorization.NonResourceAttributes{Path:${q(non.path)}, Verb:${q(non.verb)}}`, 'cannot be specified in combination with resourceAttributes'),
    );
  }
  if (!res && !non) errs.push(fieldErr.invalidRaw('spec.resourceAttributes', '"null"', 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  if (!user && groups.length === 0) errs.push(fieldErr.invalid('spec.user', user, 'at least one of user or group must be specified'));
  // The apiserver names no kind here (its decoded review has an empty TypeMeta): `.authorization.k8s.io "" is invalid`.
  if (errs.length) throw invalid({ group: 'authorization.k8s.io', kind: '' }, '', errs);
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const attrs: Attributes = res
    ? {
        user: { name: user, groups },
        verb: str(res.verb),
        resourceRequest: true,
        apiGroup: str(res.group),
        resource: str(res.resource),
        subresource: str(res.subresource),
        name: str(res.name),
        namespace: str(res.namespace),
        path: '',
      }
    : { user: { name: user, groups }, verb: str(non.verb), resourceRequest: false, apiGroup: '', resource: '', subresource: '', name: '', namespace: '', path: str(non.path) };
  const d = rbac.authorize(attrs);
  const status = d.allowed ? { allowed: true, reason: 'RBAC: allowed' } : { allowed: false, ...(d.reason ? { evaluationError: d.reason } : {}) };
  return { code: 201, body: { ...out, status } };
}

/** The review resources served, by group version (for discovery). */
export const REVIEW_RESOURCES: Record<string, { name: string; kind: string }[]> = {
  'authentication.k8s.io/v1': [{ name: 'tokenreviews', kind: 'TokenReview' }],
  'authorization.k8s.io/v1': [
    { name: 'selfsubjectaccessreviews', kind: 'SelfSubjectAccessReview' },
    { name: 'subjectaccessreviews', kind: 'SubjectAccessReview' },
  ],
};

/** `selfsubjectaccessreviews`: the same RBAC answer, about the requester (ValidateSelfSubjectAccessReviewSpec). */
function selfReview(info: RequestInfo, body: Any, rbac: RbacAuthorizer, user: UserInfo): { code: number; body: unknown } {
  if (info.verb !== 'create') throw methodNotAllowed('the server does not allow this method on the requested resource');
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the review body must be a JSON object');
  const spec = (body.spec ?? {}) as Any;
  const res = spec.resourceAttributes as Any;
  const non = spec.nonResourceAttributes as Any;
  const errs: FieldError[] = [];
  if (res && non) {
    const q = (v: unknown) => JSON.stringify(typeof v === 'string' ? v : '');
    errs.push(
      fieldErr.invalidRaw('spec.nonResourceAttributes', `authorization.NonResourceAttributes{Path:${q(non.path)}, Verb:${q(non.verb)}}`, 'cannot be specified in combination with resourceAttributes'),
    );
  }
  if (!res && !non) errs.push(fieldErr.invalidRaw('spec.resourceAttributes', '"null"', 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  if (errs.length) throw invalid({ group: 'authorization.k8s.io', kind: '' }, '', errs);
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const attrs: Attributes = res
    ? {
        user,
        verb: str(res.verb),
        resourceRequest: true,
        apiGroup: str(res.group),
        resource: str(res.resource),
        subresource: str(res.subresource),
        name: str(res.name),
        namespace: str(res.namespace),
        path: '',
      }
    : { user, verb: str(non.verb), resourceRequest: false, apiGroup: '', resource: '', subresource: '', name: '', namespace: '', path: str(non.path) };
  const d = rbac.authorize(attrs);
  const status = d.allowed ? { allowed: true, reason: 'RBAC: allowed' } : { allowed: false, ...(d.reason ? { evaluationError: d.reason } : {}) };
  return { code: 201, body: { kind: 'SelfSubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', metadata: { creationTimestamp: null }, spec, status } };
}

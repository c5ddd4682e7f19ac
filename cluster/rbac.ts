/**
 * Bearer-token authentication and RBAC authorization, after
 * `plugin/pkg/auth/authorizer/rbac/rbac.go` and `pkg/apis/rbac/v1/evaluation_helpers.go`: rules
 * come from a manifest (ServiceAccount, Role, RoleBinding, ClusterRole, ClusterRoleBinding), a
 * request is allowed when any rule bound to the user matches, and `system:masters` may do
 * everything. Denials carry the apiserver's Forbidden message and RBAC reason.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { loadAll } from 'js-yaml';

export interface UserInfo {
  name: string;
  groups: string[];
}

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}

interface RoleRef {
  kind: string;
  name: string;
}

interface Binding {
  namespace?: string;
  subjects: Subject[];
  roleRef: RoleRef;
}

/** What RBAC needs to know about a request (`authorizer.Attributes`). */
export interface Attributes {
  user: UserInfo;
  verb: string;
  resourceRequest: boolean;
  apiGroup: string;
  resource: string;
  subresource: string;
  name: string;
  namespace: string;
  path: string;
}

/** The audience of tokens meant for the apiserver itself (`--api-audiences`, default the issuer). */
export const API_AUDIENCE = 'https://kubernetes.default.svc';

interface TokenEntry {
  user: UserInfo;
  audiences: string[];
}

export class Authenticator {
  private readonly tokens = new Map<string, TokenEntry>();
  private readonly bySa = new Map<string, string>();
  readonly adminToken: string;

  constructor() {
    this.adminToken = this.mint({ name: 'admin', groups: ['system:masters', 'system:authenticated'] });
  }

  private mint(user: UserInfo, audiences: string[] = [API_AUDIENCE]): string {
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, { user, audiences });
    return token;
  }

  private static serviceAccountUser(namespace: string, serviceAccount: string): UserInfo {
    return {
      name: `system:serviceaccount:${namespace}:${serviceAccount}`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
    };
  }

  /** A token for `system:serviceaccount:<ns>:<sa>` (the same one on every call). */
  tokenFor(namespace: string, serviceAccount: string): string {
    const k = `${namespace}/${serviceAccount}`;
    let t = this.bySa.get(k);
    if (!t) {
      t = this.mint(Authenticator.serviceAccountUser(namespace, serviceAccount));
      this.bySa.set(k, t);
    }
    return t;
  }

  /** A new token for a ServiceAccount, minted for `audiences` (what a TokenRequest gives). */
  requestToken(namespace: string, serviceAccount: string, audiences: string[]): string {
    return this.mint(Authenticator.serviceAccountUser(namespace, serviceAccount), audiences.length ? audiences : [API_AUDIENCE]);
  }

  /** A token for an arbitrary user (tests of User/Group subjects). */
  tokenForUser(name: string, groups: string[] = [], audiences?: string[]): string {
    return this.mint({ name, groups: [...groups, 'system:authenticated'] }, audiences);
  }

  /** The user of a request to the apiserver: only tokens minted for the apiserver's audience. */
  authenticate(authorization: string | undefined): UserInfo | undefined {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    const e = m ? this.tokens.get(m[1]!) : undefined;
    return e?.audiences.includes(API_AUDIENCE) ? e.user : undefined;
  }

  /**
   * A TokenReview: the token's user and the audiences it is valid for among those asked (the
   * apiserver's own when none are); undefined when it is unknown or meant for none of them.
   */
  review(token: string, audiences: string[]): { user: UserInfo; audiences: string[] } | undefined {
    const e = this.tokens.get(token);
    if (!e) return undefined;
    const wanted = audiences.length ? audiences : [API_AUDIENCE];
    const both = wanted.filter((a) => e.audiences.includes(a));
    return both.length ? { user: e.user, audiences: both } : undefined;
  }
}

/** Health and version, for everyone, anonymous included (system:public-info-viewer). */
const PUBLIC_INFO: PolicyRule = {
  verbs: ['get'],
  nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'],
};
/** Discovery, for authenticated users only (system:discovery). */
const DISCOVERY: PolicyRule = {
  verbs: ['get'],
  nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/openapi', '/openapi/*'],
};

/**
 * The bootstrap `system:basic-user` ClusterRole, bound to `system:authenticated` on a real
 * apiserver: anyone signed in may ask what they themselves may do (`kubectl auth can-i`).
 */
const BASIC_USER: PolicyRule = { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] };

/**
 * The bootstrap ClusterRoles the functions' manifests refer to (a real apiserver creates these
 * itself): `system:auth-delegator`, what a server that delegates authentication and authorization
 * to the apiserver needs.
 */
const BOOTSTRAP_CLUSTER_ROLES: Record<string, PolicyRule[]> = {
  'system:auth-delegator': [
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ],
};

function has(list: string[] | undefined, v: string): boolean {
  return !!list && list.includes(v);
}

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return has(rule.verbs, '*') || has(rule.verbs, verb);
}

function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return has(rule.apiGroups, '*') || has(rule.apiGroups, group);
}

function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combined) return true;
    if (!subresource) continue;
    if (r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  return !rule.resourceNames || rule.resourceNames.length === 0 || rule.resourceNames.includes(name);
}

function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === '*' || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.slice(0, -1))) return true;
  }
  return false;
}

export function ruleAllows(a: Attributes, rule: PolicyRule): boolean {
  if (a.resourceRequest) {
    const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    return verbMatches(rule, a.verb) && apiGroupMatches(rule, a.apiGroup) && resourceMatches(rule, combined, a.subresource) && resourceNameMatches(rule, a.name);
  }
  return verbMatches(rule, a.verb) && nonResourceURLMatches(rule, a.path);
}

function appliesTo(user: UserInfo, subjects: Subject[], namespace: string): boolean {
  for (const s of subjects) {
    if (s.kind === 'User' && s.name === user.name) return true;
    if (s.kind === 'Group' && user.groups.includes(s.name)) return true;
    if (s.kind === 'ServiceAccount') {
      const ns = s.namespace || namespace;
      if (ns && user.name === `system:serviceaccount:${ns}:${s.name}`) return true;
    }
  }
  return false;
}

export interface Decision {
  allowed: boolean;
  /** The RBAC reason appended to a Forbidden message (e.g. a binding to a missing role). */
  reason: string;
}

type RbacDoc = { kind?: string; metadata?: { name?: string; namespace?: string }; rules?: PolicyRule[]; subjects?: Subject[]; roleRef?: RoleRef };

/** The rule set of one manifest, which tests may then edit object by object. */
export class RbacAuthorizer {
  private roles = new Map<string, PolicyRule[]>();
  private clusterRoles = new Map<string, PolicyRule[]>(Object.entries(BOOTSTRAP_CLUSTER_ROLES));
  /** By `<ns>/<name>`. */
  private roleBindings = new Map<string, Binding>();
  /** By name. */
  private clusterRoleBindings = new Map<string, Binding>();
  /** ServiceAccounts declared in the manifest (`ns/name`), for information. */
  serviceAccounts = new Set<string>();

  /** Replaces all rules with those of a multi-document YAML manifest. */
  loadYaml(text: string): void {
    this.roles = new Map();
    this.clusterRoles = new Map(Object.entries(BOOTSTRAP_CLUSTER_ROLES));
    this.roleBindings = new Map();
    this.clusterRoleBindings = new Map();
    this.serviceAccounts = new Set();
    this.applyYaml(text);
  }

  /** Creates or replaces each object of a manifest, as `kubectl apply` would; other objects stay. */
  applyYaml(text: string): void {
    for (const raw of loadAll(text)) {
      if (!raw || typeof raw !== 'object') continue;
      const doc = raw as RbacDoc;
      const name = doc.metadata?.name ?? '';
      const ns = doc.metadata?.namespace ?? 'default';
      switch (doc.kind) {
        case 'ServiceAccount':
          this.serviceAccounts.add(`${ns}/${name}`);
          break;
        case 'Role':
          this.roles.set(`${ns}/${name}`, doc.rules ?? []);
          break;
        case 'ClusterRole':
          this.clusterRoles.set(name, doc.rules ?? []);
          break;
        case 'RoleBinding':
          this.roleBindings.set(`${ns}/${name}`, { namespace: ns, subjects: doc.subjects ?? [], roleRef: doc.roleRef ?? { kind: 'Role', name: '' } });
          break;
        case 'ClusterRoleBinding':
          this.clusterRoleBindings.set(name, { subjects: doc.subjects ?? [], roleRef: doc.roleRef ?? { kind: 'ClusterRole', name: '' } });
          break;
        default:
          break;
      }
    }
  }

  /** Deletes one object (`namespace` for Role and RoleBinding); whether it existed. */
  delete(kind: 'Role' | 'RoleBinding' | 'ClusterRole' | 'ClusterRoleBinding', name: string, namespace = 'default'): boolean {
    switch (kind) {
      case 'Role':
        return this.roles.delete(`${namespace}/${name}`);
      case 'RoleBinding':
        return this.roleBindings.delete(`${namespace}/${name}`);
      case 'ClusterRole':
        return this.clusterRoles.delete(name);
      case 'ClusterRoleBinding':
        return this.clusterRoleBindings.delete(name);
    }
  }

  async loadFile(path: string): Promise<void> {
    this.loadYaml(await readFile(path, 'utf8'));
  }

  private rulesFor(ref: RoleRef, bindingNamespace: string | undefined): PolicyRule[] | Error {
    if (ref.kind === 'ClusterRole') {
      const r = this.clusterRoles.get(ref.name);
      return r ?? new Error(`clusterrole.rbac.authorization.k8s.io "${ref.name}" not found`);
    }
    if (ref.kind === 'Role') {
      const r = this.roles.get(`${bindingNamespace}/${ref.name}`);
      return r ?? new Error(`role.rbac.authorization.k8s.io "${ref.name}" not found`);
    }
    return new Error(`unsupported role reference kind: "${ref.kind}"`);
  }

  authorize(a: Attributes): Decision {
    if (a.user.groups.includes('system:masters')) return { allowed: true, reason: '' };
    if (!a.resourceRequest && ruleAllows(a, PUBLIC_INFO)) return { allowed: true, reason: '' };
    if (!a.resourceRequest && a.user.groups.includes('system:authenticated') && ruleAllows(a, DISCOVERY)) return { allowed: true, reason: '' };
    if (a.resourceRequest && a.user.groups.includes('system:authenticated') && ruleAllows(a, BASIC_USER)) return { allowed: true, reason: '' };
    const errors: string[] = [];
    for (const b of this.clusterRoleBindings.values()) {
      if (!appliesTo(a.user, b.subjects, '')) continue;
      const rules = this.rulesFor(b.roleRef, undefined);
      if (rules instanceof Error) errors.push(rules.message);
      else if (rules.some((r) => ruleAllows(a, r))) return { allowed: true, reason: '' };
    }
    if (a.namespace) {
      for (const b of this.roleBindings.values()) {
        if (b.namespace !== a.namespace || !appliesTo(a.user, b.subjects, a.namespace)) continue;
        const rules = this.rulesFor(b.roleRef, b.namespace);
        if (rules instanceof Error) errors.push(rules.message);
        else if (rules.some((r) => ruleAllows(a, r))) return { allowed: true, reason: '' };
      }
    }
    const reason = errors.length === 0 ? '' : `RBAC: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}`;
    return { allowed: false, reason };
  }
}

/** `forbiddenMessage` in `apiserver/pkg/endpoints/handlers/responsewriters/errors.go`. */
export function forbiddenMessage(a: Attributes): string {
  if (!a.resourceRequest) return `User "${a.user.name}" cannot ${a.verb} path "${a.path}"`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  if (a.namespace) {
    return `User "${a.user.name}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup}" in the namespace "${a.namespace}"`;
  }
  return `User "${a.user.name}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup}" at the cluster scope`;
}

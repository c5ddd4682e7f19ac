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

export class Authenticator {
  private readonly tokens = new Map<string, UserInfo>();
  private readonly bySa = new Map<string, string>();
  readonly adminToken: string;

  constructor() {
    this.adminToken = this.mint({ name: 'admin', groups: ['system:masters', 'system:authenticated'] });
  }

  private mint(user: UserInfo): string {
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, user);
    return token;
  }

  /** A token for `system:serviceaccount:<ns>:<sa>` (the same one on every call). */
  tokenFor(namespace: string, serviceAccount: string): string {
    const k = `${namespace}/${serviceAccount}`;
    let t = this.bySa.get(k);
    if (!t) {
      t = this.mint({
        name: `system:serviceaccount:${namespace}:${serviceAccount}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
      });
      this.bySa.set(k, t);
    }
    return t;
  }

  /** A token for an arbitrary user (tests of User/Group subjects). */
  tokenForUser(name: string, groups: string[] = []): string {
    return this.mint({ name, groups: [...groups, 'system:authenticated'] });
  }

  authenticate(authorization: string | undefined): UserInfo | undefined {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    return m ? this.tokens.get(m[1]!) : undefined;
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
    return (
      verbMatches(rule, a.verb) &&
      apiGroupMatches(rule, a.apiGroup) &&
      resourceMatches(rule, combined, a.subresource) &&
      resourceNameMatches(rule, a.name)
    );
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

/** The rule set of one manifest. */
export class RbacAuthorizer {
  private roles = new Map<string, PolicyRule[]>();
  private clusterRoles = new Map<string, PolicyRule[]>();
  private roleBindings: Binding[] = [];
  private clusterRoleBindings: Binding[] = [];
  /** ServiceAccounts declared in the manifest (`ns/name`), for information. */
  serviceAccounts = new Set<string>();

  /** Replaces all rules with those of a multi-document YAML manifest. */
  loadYaml(text: string): void {
    const roles = new Map<string, PolicyRule[]>();
    const clusterRoles = new Map<string, PolicyRule[]>();
    const roleBindings: Binding[] = [];
    const clusterRoleBindings: Binding[] = [];
    const sas = new Set<string>();
    for (const raw of loadAll(text)) {
      if (!raw || typeof raw !== 'object') continue;
      const doc = raw as { kind?: string; metadata?: { name?: string; namespace?: string }; rules?: PolicyRule[]; subjects?: Subject[]; roleRef?: RoleRef; items?: unknown[] };
      const name = doc.metadata?.name ?? '';
      const ns = doc.metadata?.namespace ?? 'default';
      switch (doc.kind) {
        case 'ServiceAccount':
          sas.add(`${ns}/${name}`);
          break;
        case 'Role':
          roles.set(`${ns}/${name}`, doc.rules ?? []);
          break;
        case 'ClusterRole':
          clusterRoles.set(name, doc.rules ?? []);
          break;
        case 'RoleBinding':
          roleBindings.push({ namespace: ns, subjects: doc.subjects ?? [], roleRef: doc.roleRef ?? { kind: 'Role', name: '' } });
          break;
        case 'ClusterRoleBinding':
          clusterRoleBindings.push({ subjects: doc.subjects ?? [], roleRef: doc.roleRef ?? { kind: 'ClusterRole', name: '' } });
          break;
        default:
          break;
      }
    }
    this.roles = roles;
    this.clusterRoles = clusterRoles;
    this.roleBindings = roleBindings;
    this.clusterRoleBindings = clusterRoleBindings;
    this.serviceAccounts = sas;
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
    const errors: string[] = [];
    for (const b of this.clusterRoleBindings) {
      if (!appliesTo(a.user, b.subjects, '')) continue;
      const rules = this.rulesFor(b.roleRef, undefined);
      if (rules instanceof Error) errors.push(rules.message);
      else if (rules.some((r) => ruleAllows(a, r))) return { allowed: true, reason: '' };
    }
    if (a.namespace) {
      for (const b of this.roleBindings) {
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

/**
 * Kubernetes auth mode end to end: real tokens minted for an audience (TokenRequest), real Roles
 * and bindings, and the apiserver doing the TokenReviews and SubjectAccessReviews (the embedded one
 * in `npm test`, the real v1.20 one in `npm run test:cluster`). The functions run as the usual
 * identity plus the system:auth-delegator binding of knative/components/kubernetes-auth.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { AuthorizationV1Api, KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { actorMixin } from '../lib/actor.ts';
import { createApp } from '../lib/http/app.ts';
import { authFromEnv } from '../lib/http/auth.ts';
import { jsonCall } from '../lib/testing/json-call.ts';
import { envelopeOf } from '../lib/testing/route-kit.ts';
import { ROOT, type Stack, startStack } from './support/stack.ts';

/** Short, so the revocation test waits for real: an allow is reused this long. */
const ALLOW_TTL_S = 4;
const NS = 'minecraft';
const user = (sa: string) => `system:serviceaccount:${NS}:${sa}`;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const write = (text: string) => ({ content: Buffer.from(text).toString('base64'), content_sha256: sha(text) });

const BINDINGS = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: felis-world-e2e-auth-delegator }
subjects: [{ kind: ServiceAccount, name: felis-world, namespace: ${NS} }]
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:auth-delegator }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: e2e-viewer, namespace: ${NS} }
subjects: [{ kind: ServiceAccount, name: e2e-viewer, namespace: ${NS} }]
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: felis-world-viewer }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: e2e-editor-survival, namespace: ${NS} }
rules:
  - { apiGroups: [felis.lolicon.best], resources: [minecraftservers/files], resourceNames: [survival], verbs: [get, update] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: e2e-editor, namespace: ${NS} }
subjects: [{ kind: ServiceAccount, name: e2e-editor, namespace: ${NS} }]
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: e2e-editor-survival }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: e2e-operator, namespace: ${NS} }
subjects: [{ kind: ServiceAccount, name: e2e-operator, namespace: ${NS} }]
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: felis-world-operator }
`;

describe('kubernetes auth mode, with the apiserver doing the reviews', () => {
  let stack: Stack;
  const logs: string[] = [];
  const tokens: Record<string, string> = {};

  /** Waits until the apiserver answers `allowed` for `sa` updating survival's files (RBAC changes apply asynchronously on a real one). */
  async function awaitAccess(sa: string, verb: string, name: string, allowed: boolean): Promise<number> {
    const sar = stack.cluster.kubeConfig(stack.cluster.adminToken).makeApiClient(AuthorizationV1Api);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const r = await sar.createSubjectAccessReview({
        body: { spec: { user: user(sa), resourceAttributes: { group: 'felis.lolicon.best', resource: 'minecraftservers', subresource: 'files', verb, namespace: NS, name } } },
      });
      if (!!r.status?.allowed === allowed) return Date.now();
      if (Date.now() > deadline) throw new Error(`RBAC for ${sa} did not converge within 15 s`);
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  const as = (who: string | undefined, method: string, path: string, body?: unknown) =>
    jsonCall((p, init) => fetch(stack.url + p, init), who === undefined ? '' : (tokens[who] ?? who), method, path, body, who === undefined ? { authorization: '' } : {});

  before(async () => {
    const sink = new Writable({
      write(chunk, _e, cb) {
        logs.push(chunk.toString());
        cb();
      },
    });
    stack = await startStack({
      logger: pino({ level: 'info', mixin: actorMixin }, sink),
      authEnv: { FELIS_AUTH_MODE: 'kubernetes', FELIS_AUTH_ALLOW_TTL_SECONDS: String(ALLOW_TTL_S), FELIS_AUTH_DENY_TTL_SECONDS: '1' },
    });
    await stack.cluster.applyRbac(readFileSync(join(ROOT, 'knative/examples/roles.yaml'), 'utf8') + '---\n' + BINDINGS);
    for (const sa of ['e2e-viewer', 'e2e-editor', 'e2e-operator']) tokens[sa] = await stack.cluster.requestToken(NS, sa, ['felis-world']);
    tokens.wrongAudience = await stack.cluster.requestToken(NS, 'e2e-operator', ['not-felis-world']);
    await awaitAccess('e2e-viewer', 'get', 'survival', true);
    await awaitAccess('e2e-editor', 'update', 'survival', true);
    await awaitAccess('e2e-operator', 'update', 'survival', true);
  });
  after(async () => {
    // The real control plane outlives this stack: leave no grant behind for the next suite.
    if (stack) {
      await stack.cluster.deleteRbac('ClusterRoleBinding', 'felis-world-e2e-auth-delegator');
      for (const b of ['e2e-viewer', 'e2e-editor', 'e2e-operator']) await stack.cluster.deleteRbac('RoleBinding', b, NS);
      await stack.cluster.deleteRbac('Role', 'e2e-editor-survival', NS);
    }
    await stack?.close();
  });

  test('a viewer lists and reads, and is refused a write with 403 naming the permission', async () => {
    const list = await as('e2e-viewer', 'GET', '/api/v1/servers/survival/files');
    assert.equal(list.status, 200, list.text);
    assert.ok(list.body.entries.some((e: { name: string }) => e.name === 'eula.txt'));
    assert.equal((await as('e2e-viewer', 'GET', '/api/v1/servers/survival/file?path=eula.txt')).status, 200);
    const w = await as('e2e-viewer', 'PUT', '/api/v1/servers/survival/file?path=viewer.txt', write('no'));
    assert.equal(w.status, 403, w.text);
    assert.equal(envelopeOf(w).code, 'forbidden');
    assert.match(envelopeOf(w).message, /update minecraftservers\/files survival/);
    assert.doesNotMatch(w.text, new RegExp(tokens['e2e-viewer']!.slice(-20)));
  });

  test('an editor of survival writes there, audited under its name, and cannot touch another server', async () => {
    const w = await as('e2e-editor', 'PUT', '/api/v1/servers/survival/file?path=editor.txt', write('hello'));
    assert.equal(w.status, 200, w.text);
    const audit = logs.map((l) => JSON.parse(l)).find((l) => l.audit && l.action === 'file.write' && l.target === 'survival:editor.txt');
    assert.equal(audit?.actor, user('e2e-editor'));
    assert.equal(audit?.actor_service_account, `${NS}/e2e-editor`);
    for (const [m, p] of [
      ['GET', '/api/v1/servers/creative/files'],
      ['PUT', '/api/v1/servers/creative/file?path=x.txt'],
      ['DELETE', '/api/v1/servers/survival/lock'],
    ] as const) {
      const r = await as('e2e-editor', m, p, m === 'PUT' ? write('x') : undefined);
      assert.equal(r.status, 403, `${m} ${p}: ${r.text}`);
    }
  });

  test('an operator unlocks; a viewer may not', async () => {
    const r = await as('e2e-operator', 'DELETE', '/api/v1/servers/survival/lock');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.removed, false);
    assert.equal((await as('e2e-viewer', 'DELETE', '/api/v1/servers/survival/lock')).status, 403);
  });

  test('a token for another audience, an unknown token and none at all are 401', async () => {
    for (const t of ['wrongAudience', 'not-a-token', undefined]) {
      const r = await as(t, 'GET', '/api/v1/servers/survival/files');
      assert.equal(r.status, 401, `${t}: ${r.text}`);
      assert.equal(envelopeOf(r).code, 'unauthorized');
    }
    // The apiserver's own ServiceAccount tokens are for its audience, not felis-world's.
    assert.equal((await as(stack.cluster.tokenFor(NS, 'felis-world'), 'GET', '/api/v1/servers/survival/files')).status, 401);
  });

  test('a revoked binding keeps working for the allow TTL at most, and stops after it', async () => {
    const r0 = await as('e2e-editor', 'GET', '/api/v1/servers/survival/files?path=plugins');
    const t0 = Date.now();
    assert.equal(r0.status, 200, r0.text);
    await stack.cluster.deleteRbac('RoleBinding', 'e2e-editor', NS);
    const revoked = await awaitAccess('e2e-editor', 'get', 'survival', false);
    assert.ok(revoked - t0 < ALLOW_TTL_S * 1000 - 500, `the apiserver saw the revocation ${revoked - t0} ms after the allow`);
    // Not before: the cached allow still stands.
    assert.equal((await as('e2e-editor', 'GET', '/api/v1/servers/survival/files?path=plugins')).status, 200);
    await new Promise((res) => setTimeout(res, ALLOW_TTL_S * 1000 - (Date.now() - t0) + 100));
    const after = await as('e2e-editor', 'GET', '/api/v1/servers/survival/files?path=plugins');
    assert.equal(after.status, 403, after.text);
  });

  test('an apiserver that fails the review gives 503 auth_unavailable, never 2xx or 401; the next request is reviewed again', async () => {
    const fresh = await stack.cluster.requestToken(NS, 'e2e-viewer', ['felis-world']);
    stack.cluster.faults.failNext({ verb: 'create', resource: 'tokenreviews', code: 503, message: 'etcdserver: request timed out' });
    const r = await as(fresh, 'GET', '/api/v1/servers/survival/files');
    assert.equal(r.status, 503, r.text);
    assert.equal(envelopeOf(r).code, 'auth_unavailable');
    assert.equal((await as(fresh, 'GET', '/api/v1/servers/survival/files')).status, 200);
  });

  test('an apiserver that cannot be reached gives 503 auth_unavailable', async () => {
    // A port that was just free: nothing listens there.
    const probe = createNetServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'gone', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 'x' }],
      contexts: [{ name: 'c', cluster: 'gone', user: 'u' }],
      currentContext: 'c',
    });
    const lines: string[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _e, cb) {
          lines.push(chunk.toString());
          cb();
        },
      }),
    );
    const app = createApp({ logger, auth: authFromEnv({ FELIS_AUTH_MODE: 'kubernetes' }, kc, logger) }, (a) => {
      a.get('/api/v1/servers/:name/files', (c) => c.text('reached'));
    });
    const r = await jsonCall((p, init) => app.request(p, init), tokens['e2e-viewer']!, 'GET', '/api/v1/servers/survival/files');
    assert.equal(r.status, 503, r.text);
    assert.equal(envelopeOf(r).code, 'auth_unavailable');
    // It was the connection that failed (the log says so; the caller is told only to retry).
    assert.match(lines.join(''), /ECONNREFUSED/);
  });
});

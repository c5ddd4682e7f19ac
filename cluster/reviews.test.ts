/**
 * TokenReview and SubjectAccessReview on the embedded apiserver, through client-node over HTTP:
 * gated by RBAC like the real ones (`system:auth-delegator`), audiences honoured, answers from the
 * token table and the RBAC engine, and edits of bindings seen at once.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { AuthenticationV1Api, AuthorizationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { type EmbeddedCluster, startCluster } from './index.ts';
import { reviewerGrantYaml } from './review-grant.ts';

let tmp: string;
let cluster: EmbeddedCluster;

const DELEGATOR = reviewerGrantYaml();
const EDITOR = `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: editor, namespace: minecraft }
rules: [{ apiGroups: [felis.lolicon.best], resources: [minecraftservers/files], verbs: [get, update], resourceNames: [survival] }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: alice-edits-survival, namespace: minecraft }
subjects: [{ kind: ServiceAccount, name: alice, namespace: minecraft }]
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: editor }
`;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'felis-reviews-'));
  cluster = await startCluster({ dataDir: tmp, rbacManifest: join(import.meta.dirname, 'testdata/rbac.yaml') });
});
after(async () => {
  await cluster?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const fn = () => cluster.kubeConfig(cluster.tokenFor('minecraft', 'felis-world'));
const tokenReview = (token: string, audiences?: string[]) =>
  fn()
    .makeApiClient(AuthenticationV1Api)
    .createTokenReview({ body: { spec: { token, ...(audiences ? { audiences } : {}) } } });
const filesAccess = (user: string, verb: string, name: string) =>
  fn()
    .makeApiClient(AuthorizationV1Api)
    .createSubjectAccessReview({
      body: {
        spec: { user, groups: ['system:authenticated'], resourceAttributes: { group: 'felis.lolicon.best', resource: 'minecraftservers', subresource: 'files', verb, namespace: 'minecraft', name } },
      },
    });

test('reviews need create on them: refused (403) until system:auth-delegator is bound', async () => {
  await assert.rejects(tokenReview('x', ['felis-world']), (e: { code?: number }) => e.code === 403);
  await cluster.applyRbac(DELEGATOR);
  const r = await tokenReview('not-a-token', ['felis-world']);
  assert.equal(r.status?.authenticated ?? false, false);
  assert.equal(cluster.counts('system:serviceaccount:minecraft:felis-world')['create tokenreviews'], 2);
});

test('a token minted for an audience is authenticated for it, and for no other audience', async () => {
  await cluster.applyRbac(DELEGATOR);
  const t = await cluster.requestToken('minecraft', 'alice', ['felis-world']);
  const ok = await tokenReview(t, ['felis-world']);
  assert.equal(ok.status?.authenticated, true);
  assert.equal(ok.status?.user?.username, 'system:serviceaccount:minecraft:alice');
  assert.ok(ok.status?.user?.groups?.includes('system:serviceaccounts:minecraft'));
  assert.deepEqual(ok.status?.audiences, ['felis-world']);
  assert.notEqual((await tokenReview(t, ['another'])).status?.authenticated, true);
  // Nor is it a token for the apiserver itself: used there, it is 401.
  await assert.rejects(cluster.kubeConfig(t).makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'minecraft' }), (e: { code?: number }) => e.code === 401);
  // The apiserver's own tokens are for its audience only.
  assert.notEqual((await tokenReview(cluster.tokenFor('minecraft', 'felis-world'), ['felis-world'])).status?.authenticated, true);
  assert.equal((await tokenReview(cluster.tokenFor('minecraft', 'felis-world'))).status?.authenticated, true);
});

test('access reviews answer from RBAC, per server with resourceNames, and follow a deleted binding at once', async () => {
  await cluster.applyRbac(DELEGATOR + '---\n' + EDITOR);
  const alice = 'system:serviceaccount:minecraft:alice';
  assert.equal((await filesAccess(alice, 'update', 'survival')).status?.allowed, true);
  assert.equal((await filesAccess(alice, 'update', 'creative')).status?.allowed, false);
  assert.equal((await filesAccess(alice, 'delete', 'survival')).status?.allowed, false);
  await cluster.deleteRbac('RoleBinding', 'alice-edits-survival', 'minecraft');
  assert.equal((await filesAccess(alice, 'update', 'survival')).status?.allowed, false);
});

test('a non-resource review, and a malformed review refused as invalid (422)', async () => {
  await cluster.applyRbac(
    DELEGATOR +
      `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: settler }
rules: [{ nonResourceURLs: [/felis-world/settle], verbs: [post] }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: settler }
subjects: [{ kind: User, name: bob }]
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: settler }
`,
  );
  const sar = fn().makeApiClient(AuthorizationV1Api);
  const settle = (user: string) => sar.createSubjectAccessReview({ body: { spec: { user, nonResourceAttributes: { path: '/felis-world/settle', verb: 'post' } } } });
  assert.equal((await settle('bob')).status?.allowed, true);
  assert.equal((await settle('carol')).status?.allowed, false);
  await assert.rejects(sar.createSubjectAccessReview({ body: { spec: { user: 'bob' } } }), (e: { code?: number }) => e.code === 422);
  // Worded as the apiserver does: no kind, even when the body names one.
  const raw = await cluster.fetch(`/apis/authorization.k8s.io/v1/subjectaccessreviews`, {
    method: 'POST',
    headers: { authorization: `Bearer ${cluster.tokenFor('minecraft', 'felis-world')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'SubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', spec: {} }),
  });
  const status = (await raw.json()) as { message: string; details: Record<string, unknown> };
  assert.equal(
    status.message,
    '.authorization.k8s.io "" is invalid: [spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]',
  );
  assert.equal(status.details.kind, undefined);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorOf } from '../actor.ts';
import { ROUTE_PERMISSIONS } from '../http/routes/permissions.ts';
import { attributesOf, describePermission, type Permission, SETTLE } from './actions.ts';
import { KubeAuthorizer } from './authorizer.ts';
import { FakeReviewer } from './fake-reviewer.test-kit.ts';
import { AuthUnavailableError } from './reviewer.ts';

const EDITOR = 'system:serviceaccount:players:alice';
const filesUpdate = ROUTE_PERMISSIONS['PUT /api/v1/servers/:name/file'] as Exclude<Permission, { kind: 'public' }>;
const onSurvival = attributesOf(filesUpdate, 'minecraft', 'survival');
const onCreative = attributesOf(filesUpdate, 'minecraft', 'creative');

function setup(allowTtlMs = 10_000, denyTtlMs = 5_000) {
  const clock = { now: 0 };
  const reviewer = new FakeReviewer().user('alice-token', EDITOR, [{ permission: 'update minecraftservers/files', servers: ['survival'] }]);
  const authz = new KubeAuthorizer(reviewer, { allowTtlMs, denyTtlMs, cacheSize: 100, now: () => clock.now });
  return { clock, reviewer, authz };
}

test('an editor of one server is allowed there and refused on another, with the permission named', async () => {
  const { authz } = setup();
  const ok = await authz.decide('alice-token', 'felis-world', onSurvival);
  assert.deepEqual(ok, { kind: 'allowed', actor: { name: EDITOR, serviceAccount: 'players/alice' } });
  const no = await authz.decide('alice-token', 'felis-world', onCreative);
  assert.deepEqual(no, { kind: 'forbidden', actor: { name: EDITOR, serviceAccount: 'players/alice' }, permission: 'update minecraftservers/files creative' });
});

test('a token for another audience, or an unknown one, is unauthenticated', async () => {
  const { authz, reviewer } = setup();
  reviewer.user('other-aud', 'bob', [], ['https://kubernetes.default.svc']);
  assert.equal((await authz.decide('other-aud', 'felis-world', onSurvival)).kind, 'unauthenticated');
  assert.equal((await authz.decide('nobody', 'felis-world', onSurvival)).kind, 'unauthenticated');
});

test('a revoked grant keeps working until the allow TTL runs out, and not a moment longer', async () => {
  const { authz, reviewer, clock } = setup(10_000, 5_000);
  assert.equal((await authz.decide('alice-token', 'felis-world', onSurvival)).kind, 'allowed');
  reviewer.grants.set(EDITOR, []); // the binding is deleted
  clock.now = 9_999;
  assert.equal((await authz.decide('alice-token', 'felis-world', onSurvival)).kind, 'allowed');
  assert.equal(reviewer.reviews.access, 1, 'answered from the cache');
  clock.now = 10_000;
  assert.equal((await authz.decide('alice-token', 'felis-world', onSurvival)).kind, 'forbidden');
  assert.equal(reviewer.reviews.access, 2);
});

test('a refusal is reused for the deny TTL only: a new grant works once it runs out', async () => {
  const { authz, reviewer, clock } = setup(10_000, 5_000);
  assert.equal((await authz.decide('alice-token', 'felis-world', onCreative)).kind, 'forbidden');
  reviewer.grants.set(EDITOR, [{ permission: 'update minecraftservers/files' }]);
  clock.now = 4_999;
  assert.equal((await authz.decide('alice-token', 'felis-world', onCreative)).kind, 'forbidden');
  clock.now = 5_000;
  assert.equal((await authz.decide('alice-token', 'felis-world', onCreative)).kind, 'allowed');
});

test('an apiserver that cannot answer is never cached: the next request asks again', async () => {
  const { authz, reviewer } = setup();
  reviewer.down = new Error('connect ECONNREFUSED');
  await assert.rejects(authz.decide('alice-token', 'felis-world', onSurvival), AuthUnavailableError);
  assert.equal(authz.cached, 0);
  reviewer.down = undefined;
  assert.equal((await authz.decide('alice-token', 'felis-world', onSurvival)).kind, 'allowed');
  assert.equal(reviewer.reviews.tokens, 2);
});

test('the cache is keyed by the token and the attributes: another token or action is asked anew', async () => {
  const { authz, reviewer } = setup();
  reviewer.user('alice-2', EDITOR, [{ permission: 'update minecraftservers/files', servers: ['survival'] }]);
  await authz.decide('alice-token', 'felis-world', onSurvival);
  await authz.decide('alice-token', 'felis-world', onSurvival);
  await authz.decide('alice-2', 'felis-world', onSurvival);
  await authz.decide('alice-token', 'felis-world', onCreative);
  assert.equal(reviewer.reviews.tokens, 3);
});

test('concurrent identical questions share one review', async () => {
  const { authz, reviewer } = setup();
  reviewer.delayMs = 20;
  const all = await Promise.all(Array.from({ length: 20 }, () => authz.decide('alice-token', 'felis-world', onSurvival)));
  assert.ok(all.every((d) => d.kind === 'allowed'));
  assert.deepEqual(reviewer.reviews, { tokens: 1, access: 1 });
});

test('permissions read as RBAC would say them', () => {
  assert.equal(describePermission(onSurvival), 'update minecraftservers/files survival');
  assert.equal(describePermission(attributesOf(ROUTE_PERMISSIONS['GET /api/v1/holders'] as Exclude<Permission, { kind: 'public' }>, 'minecraft', '')), 'list minecraftservers/holder in minecraft');
  assert.equal(describePermission(attributesOf(SETTLE as Exclude<Permission, { kind: 'public' }>, 'minecraft', '')), 'post /felis-world/settle');
});

test('a ServiceAccount user is also named <namespace>/<name>; any other user only by name', () => {
  assert.deepEqual(actorOf('system:serviceaccount:minecraft:viewer'), { name: 'system:serviceaccount:minecraft:viewer', serviceAccount: 'minecraft/viewer' });
  assert.deepEqual(actorOf('alice@example.com'), { name: 'alice@example.com' });
  assert.deepEqual(actorOf('system:serviceaccount:bad'), { name: 'system:serviceaccount:bad' });
});

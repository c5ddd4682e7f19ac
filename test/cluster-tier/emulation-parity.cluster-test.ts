/**
 * Cluster tier only (`npm run test:cluster`): the same requests against the real v1.20 apiserver
 * and against a fresh embedded cluster, answer by answer — status, Content-Type, and the Status
 * body (message, reason, details). Where v1.20 and current Kubernetes word something differently
 * (listed in cluster/README.md, "Left as they are") the emulation offers the current form and each side is
 * checked against its own version's form; everything else must be identical. A difference found
 * here is fixed in the emulation and pinned in cluster/parity.test.ts.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type EmbeddedCluster, startCluster } from '../../cluster/index.ts';
import { AdminClient, type AdminReply, readControlPlaneEnv, wipeNamespace } from '../../cluster/real/admin.ts';
import { ROOT } from '../support/stack.ts';

const ENV = process.env.FELIS_TEST_CLUSTER_ENV;
const J = '/apis/batch/v1/namespaces/minecraft/jobs';
const P = '/api/v1/namespaces/minecraft/pods';
const MC = '/apis/felis.lolicon.best/v1alpha1/namespaces/minecraft/minecraftservers';
const CT: Record<string, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

type Who = 'admin' | 'fn' | 'anon' | 'bad';
const TR = '/apis/authentication.k8s.io/v1/tokenreviews';
const SAR = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
const FN_USER = 'system:serviceaccount:minecraft:felis-world';
/** A review's answer (201, its kind, authenticated or not); the user's groups and uid differ by how each side mints tokens. */
const reviewed = (authenticated: boolean) => (r: AdminReply, e: AdminReply) => {
  for (const x of [r, e]) {
    assert.equal(x.status, 201);
    assert.equal(x.body.kind, 'TokenReview');
    assert.equal(x.body.status?.authenticated === true, authenticated);
  }
  if (authenticated) assert.equal(e.body.status.user.username, r.body.status.user.username);
};
const allowed = (want: boolean) => (r: AdminReply, e: AdminReply) => {
  for (const x of [r, e]) {
    assert.equal(x.status, 201);
    assert.equal(x.body.kind, 'SubjectAccessReview');
    assert.equal(x.body.status?.allowed === true, want);
  }
};
interface Case {
  what: string;
  method: string;
  path: string;
  body?: unknown;
  ct?: string;
  who?: Who;
  /** Instead of equality: check each side (for documented version differences). */
  check?: (real: AdminReply, emb: AdminReply) => void;
}

const job = (name: string | undefined, extra: { metadata?: object; spec?: object } = {}, podSpec: object = {}) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { ...(name ? { name } : {}), ...(extra.metadata ?? {}) },
  spec: {
    backoffLimit: 0,
    ...(extra.spec ?? {}),
    template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'felis-test/parity:1', command: ['sh', '-c', 'sleep 100'] }], ...podSpec } },
  },
});
const mc = (name: string, spec: object = { desiredState: 'Stopped' }) => ({ apiVersion: 'felis.lolicon.best/v1alpha1', kind: 'MinecraftServer', metadata: { name }, spec });

/** v1.20 writes `(e.g. 'a',  or 'b'` with two spaces; current Kubernetes one (B.10). */
const oneSpace = (s: unknown) => (typeof s === 'string' ? s.replace(/', {2}or '/g, "', or '") : s);

interface Cause {
  field?: string;
  message?: string;
  reason?: string;
}

/**
 * The real server validates a custom resource's fields in Go map order, which changes from run to
 * run, so several causes are compared as a set: sorted, and the `[…]` aggregate in the message
 * rewritten in that order — but only when it lists exactly those causes in some order.
 */
function canonicalInvalid(message: string, causes: Cause[] | undefined): string {
  const mark = ' is invalid: [';
  const i = message.indexOf(mark);
  if (i < 0 || !message.endsWith(']') || !causes || causes.length < 2) return message;
  const inner = message.slice(i + mark.length, -1);
  const items = causes.map((c) => `${c.field}: ${c.message}`);
  const sameItems = inner.length === items.join(', ').length && items.every((it) => inner.includes(it));
  return sameItems ? message.slice(0, i + mark.length) + [...items].sort().join(', ') + ']' : message;
}

const causeKey = (c: Cause) => `${c.field}\u0000${c.message}`;

function statusView(r: AdminReply): unknown {
  if (r.body?.kind !== 'Status') return undefined;
  const d = r.body.details;
  const causes: Cause[] | undefined = d?.causes?.map((c: Cause) => ({ ...c, message: oneSpace(c.message) as string }));
  return {
    message: canonicalInvalid(oneSpace(r.body.message) as string, causes),
    reason: r.body.reason,
    details: d && { ...d, causes: causes && [...causes].sort((a, b) => causeKey(a).localeCompare(causeKey(b))) },
  };
}

/** Both sides answer the same code, and each message matches its own version's form. */
const versioned = (code: number, real: RegExp, current: RegExp) => (r: AdminReply, e: AdminReply) => {
  assert.equal(r.status, code, `real: ${r.text}`);
  assert.equal(e.status, code, `embedded: ${e.text}`);
  assert.match(r.body.message, real, 'real (v1.20) form');
  assert.match(e.body.message, current, 'embedded (current) form');
};

const CASES: Case[] = [
  // Lookups and RBAC.
  { what: 'get a missing Job', method: 'GET', path: `${J}/nope` },
  { what: 'get a missing PVC (function)', method: 'GET', path: '/api/v1/namespaces/minecraft/persistentvolumeclaims/nope', who: 'fn' },
  { what: 'get a missing MinecraftServer (function)', method: 'GET', path: `${MC}/nope`, who: 'fn' },
  { what: 'create in a missing namespace', method: 'POST', path: '/apis/batch/v1/namespaces/nope/jobs', body: job('a') },
  { what: 'function: delete a Job', method: 'DELETE', path: `${J}/nope`, who: 'fn' },
  { what: 'function: get a Job', method: 'GET', path: `${J}/nope`, who: 'fn' },
  { what: 'function: get a Pod', method: 'GET', path: `${P}/x`, who: 'fn' },
  { what: 'function: watch Pods', method: 'GET', path: `${P}?watch=true`, who: 'fn' },
  { what: 'function: list Jobs in another namespace', method: 'GET', path: '/apis/batch/v1/namespaces/default/jobs', who: 'fn' },
  { what: 'function: list Jobs cluster-wide', method: 'GET', path: '/apis/batch/v1/jobs', who: 'fn' },
  { what: 'function: patch MinecraftServer status', method: 'PATCH', path: `${MC}/nope/status`, body: {}, ct: CT.merge, who: 'fn' },
  { what: 'function: a group nobody serves', method: 'GET', path: '/apis/nope.io/v1/namespaces/minecraft/widgets', who: 'fn' },
  { what: 'no credentials: anonymous', method: 'GET', path: P, who: 'anon' },
  { what: 'anonymous discovery', method: 'GET', path: '/api', who: 'anon' },
  { what: 'an unknown token', method: 'GET', path: P, who: 'bad' },
  { what: 'an unknown resource', method: 'GET', path: '/api/v1/namespaces/minecraft/widgets' },
  { what: 'an unknown version', method: 'GET', path: '/apis/batch/v9/namespaces/minecraft/jobs' },
  { what: 'a group nobody serves', method: 'GET', path: '/apis/nope.io/v1/namespaces/minecraft/widgets' },

  // Job create: validation and decoding.
  { what: 'restartPolicy Always', method: 'POST', path: J, body: job('rp', {}, { restartPolicy: 'Always' }) },
  { what: 'no containers', method: 'POST', path: J, body: job('nc', {}, { containers: [] }) },
  { what: 'a bad name', method: 'POST', path: J, body: job('Bad_Name') },
  { what: 'no name', method: 'POST', path: J, body: job(undefined) },
  {
    what: 'a 64-character name',
    method: 'POST',
    path: J,
    body: job('j'.repeat(64)),
    // The same message; current Kubernetes has a cause per job-name label (the unprefixed one and,
    // since 1.27, batch.kubernetes.io/job-name), v1.20 one.
    check: (r, e) => {
      assert.equal(r.status, 422);
      assert.equal(e.status, 422);
      assert.equal(e.body.message, r.body.message);
      assert.equal(r.body.message, `Job.batch "${'j'.repeat(64)}" is invalid: spec.template.labels: Invalid value: "${'j'.repeat(64)}": must be no more than 63 characters`);
      assert.equal(r.body.details.causes.length, 1);
      assert.deepEqual(e.body.details.causes, [r.body.details.causes[0], r.body.details.causes[0]]);
    },
  },
  { what: 'a bad label key', method: 'POST', path: J, body: job('bl', { metadata: { labels: { 'a/b/c': 'x' } } }) },
  { what: 'a bad label value', method: 'POST', path: J, body: job('blv', { metadata: { labels: { a: 'x y' } } }) },
  { what: 'a bad annotation key', method: 'POST', path: J, body: job('ba', { metadata: { annotations: { 'A B': 'x' } } }) },
  { what: 'negative backoffLimit', method: 'POST', path: J, body: job('nb', { spec: { backoffLimit: -1 } }) },
  { what: 'negative ttlSecondsAfterFinished', method: 'POST', path: J, body: job('ttl', { spec: { ttlSecondsAfterFinished: -1 } }) },
  { what: 'an empty image', method: 'POST', path: J, body: job('img', {}, { containers: [{ name: 'main', image: '' }] }) },
  { what: 'a bad container name', method: 'POST', path: J, body: job('cn', {}, { containers: [{ name: 'Main_1', image: 'x' }] }) },
  {
    what: 'a mount of a missing volume (function)',
    method: 'POST',
    path: J,
    who: 'fn',
    body: job('vol', {}, { volumes: [{ name: 'w', persistentVolumeClaim: { claimName: 'c' } }], containers: [{ name: 'main', image: 'x', volumeMounts: [{ name: 'other', mountPath: '/data' }] }] }),
  },
  {
    what: 'an unparsable quantity',
    method: 'POST',
    path: J,
    body: job('mem', {}, { containers: [{ name: 'main', image: 'x', resources: { requests: { memory: 'lots' } } }] }),
    // v1.20's json-iterator names the path and the byte offset; current decoding does not.
    check: versioned(
      400,
      /^Job in version "v1" cannot be handled as a Job: v1\.Job\.Spec: .*quantities must match the regular expression/,
      /^Job in version "v1" cannot be handled as a Job: quantities must match the regular expression '\^\(\[\+-\]\?\[0-9\.\]\+\)\(\[eEinumkKMGTP\]\*\[-\+\]\?\[0-9\]\*\)\$'$/,
    ),
  },
  { what: 'an array body', method: 'POST', path: J, body: [1] },
  { what: 'a string body', method: 'POST', path: J, body: '"x"' },
  { what: 'an empty body', method: 'POST', path: J, body: '' },
  { what: 'truncated JSON', method: 'POST', path: J, body: '{' },
  { what: 'a trailing comma', method: 'POST', path: J, body: '{"a":1,}' },
  { what: 'not JSON', method: 'POST', path: J, body: 'nope' },
  { what: 'text after the object', method: 'POST', path: J, body: `${JSON.stringify(job('trail'))} x` },
  { what: 'another kind', method: 'POST', path: J, body: { ...job('wk'), kind: 'Pod' } },
  { what: 'another version', method: 'POST', path: J, body: { ...job('wv'), apiVersion: 'batch/v2' } },
  { what: 'no kind and no apiVersion (defaulted)', method: 'POST', path: J, body: { metadata: { name: 'tm' } } },
  {
    what: 'metadata not an object',
    method: 'POST',
    path: J,
    body: { apiVersion: 'batch/v1', kind: 'Job', metadata: 'x' },
    check: versioned(
      400,
      /^Job in version "v1" cannot be handled as a Job: v1\.Job\.ObjectMeta: readObjectStart/,
      /^Job in version "v1" cannot be handled as a Job: json: cannot unmarshal string into Go struct field Job\.metadata of type v1\.ObjectMeta$/,
    ),
  },
  { what: 'generateName', method: 'POST', path: J, body: { ...job(undefined), metadata: { generateName: 'gen-' } } },
  { what: 'a valid Job', method: 'POST', path: J, body: job('okjob') },
  { what: 'the same Job again', method: 'POST', path: J, body: job('okjob') },

  // Job patches and optimistic concurrency.
  {
    what: 'patch the immutable template',
    method: 'PATCH',
    path: `${J}/okjob`,
    body: { spec: { template: { metadata: { labels: { z: 'y' } } } } },
    ct: CT.merge,
    // The message embeds a Go struct dump of the template; both start and end alike.
    check: versioned(
      422,
      /^Job\.batch "okjob" is invalid: spec\.template: Invalid value: core\.PodTemplateSpec\{ObjectMeta:v1\.ObjectMeta\{.*\}: field is immutable$/,
      /^Job\.batch "okjob" is invalid: spec\.template: Invalid value: core\.PodTemplateSpec\{ObjectMeta:v1\.ObjectMeta\{.*\}: field is immutable$/,
    ),
  },
  { what: 'merge-patch labels', method: 'PATCH', path: `${J}/okjob`, body: { metadata: { labels: { z: 'y' } } }, ct: CT.merge },
  { what: 'strategic-merge-patch labels', method: 'PATCH', path: `${J}/okjob`, body: { metadata: { labels: { s: 't' } } }, ct: CT.strategic },
  { what: 'JSON patch: remove a missing key', method: 'PATCH', path: `${J}/okjob`, body: [{ op: 'remove', path: '/metadata/annotations/x' }], ct: CT.json },
  { what: 'JSON patch: a failing test', method: 'PATCH', path: `${J}/okjob`, body: [{ op: 'test', path: '/metadata/name', value: 'x' }], ct: CT.json },
  { what: 'JSON patch: an object body', method: 'PATCH', path: `${J}/okjob`, body: { metadata: {} }, ct: CT.json },
  { what: 'patch as application/json', method: 'PATCH', path: `${J}/okjob`, body: {}, ct: 'application/json' },
  { what: 'merge patch: an array body', method: 'PATCH', path: `${J}/okjob`, body: [1], ct: CT.merge },
  { what: 'patch a missing Job', method: 'PATCH', path: `${J}/nope`, body: { metadata: { labels: { z: 'y' } } }, ct: CT.merge },
  { what: 'patch with a stale resourceVersion', method: 'PATCH', path: `${J}/okjob`, body: { metadata: { resourceVersion: '1', labels: { z: 'y' } } }, ct: CT.merge },
  { what: 'patch clearing resourceVersion (Jobs: unconditional)', method: 'PATCH', path: `${J}/okjob`, body: { metadata: { resourceVersion: '', labels: { z: 'q' } } }, ct: CT.merge },

  // Lists.
  { what: 'a bad fieldSelector', method: 'GET', path: `${P}?fieldSelector=spec.foo%3Dx` },
  { what: 'a Job fieldSelector', method: 'GET', path: `${J}?fieldSelector=status.successful%3D1` },
  { what: 'a non-integer limit', method: 'GET', path: `${P}?limit=abc` },
  ...['a in x', 'a in (', 'a=b=c', 'a notin', 'a in (x', 'a,,b', '!', 'a=(b)', 'a in ()', 'a>1', 'a in (x,y),!b,c!=d'].map((sel) => ({
    what: `selector ${JSON.stringify(sel)}`,
    method: 'GET',
    path: `${P}?labelSelector=${encodeURIComponent(sel)}`,
  })),
  ...['a %', 'a x'].map((sel) => ({
    what: `selector ${JSON.stringify(sel)} (operator list: B.10)`,
    method: 'GET',
    path: `${P}?labelSelector=${encodeURIComponent(sel)}`,
    check: versioned(400, /expected: '=', '!=', '==', 'in', notin'$/, /expected: in, notin, =, ==, !=, gt, lt$/),
  })),
  {
    what: 'selector "a > x" (field errors since 1.2x)',
    method: 'GET',
    path: `${P}?labelSelector=${encodeURIComponent('a > x')}`,
    check: versioned(
      400,
      /^unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer$/,
      /^unable to parse requirement: values\[0\]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer$/,
    ),
  },
  {
    what: 'selector with a 64-character value (field errors since 1.2x)',
    method: 'GET',
    path: `${P}?labelSelector=${encodeURIComponent(`a=${'x'.repeat(64)}`)}`,
    check: versioned(
      400,
      /^unable to parse requirement: invalid label value: "x{64}": at key: "a": must be no more than 63 characters$/,
      /^unable to parse requirement: values\[0\]\[a\]: Invalid value: "x{64}": must be no more than 63 characters$/,
    ),
  },

  // pods/log option checks (before the Pod is looked up).
  { what: 'log of a missing Pod', method: 'GET', path: `${P}/nope/log` },
  { what: 'log tailLines=abc', method: 'GET', path: `${P}/nope/log?tailLines=abc` },
  { what: 'log tailLines=-1&limitBytes=0', method: 'GET', path: `${P}/nope/log?tailLines=-1&limitBytes=0` },
  { what: 'log sinceSeconds and sinceTime', method: 'GET', path: `${P}/nope/log?sinceSeconds=1&sinceTime=2020-01-01T00:00:00Z` },
  { what: 'log sinceSeconds=0', method: 'GET', path: `${P}/nope/log?sinceSeconds=0` },
  { what: 'log follow=maybe', method: 'GET', path: `${P}/nope/log?follow=maybe` },

  // The MinecraftServer custom resource.
  { what: 'MinecraftServer of another kind', method: 'POST', path: MC, body: { ...mc('k'), kind: 'Pod' } },
  { what: 'MinecraftServer of another version', method: 'POST', path: MC, body: { ...mc('k'), apiVersion: 'felis.lolicon.best/v2' } },
  { what: 'MinecraftServer: truncated JSON', method: 'POST', path: MC, body: '{' },
  {
    what: 'MinecraftServer without kind',
    method: 'POST',
    path: MC,
    body: { apiVersion: 'felis.lolicon.best/v1alpha1', metadata: { name: 'nk' } },
    check: versioned(400, /cannot be handled as a MinecraftServer: unmarshalerDecoder: Object 'Kind' is missing in '/, /^Object 'Kind' is missing in '/),
  },
  { what: 'MinecraftServer: a value outside the enum', method: 'POST', path: MC, body: mc('be', { desiredState: 'Paused' }) },
  { what: 'MinecraftServer: a valid one', method: 'POST', path: MC, body: mc('ok', { desiredState: 'Stopped', extra: 1 }) },
  { what: 'MinecraftServer: a wrong type and a bad enum', method: 'PATCH', path: `${MC}/ok`, body: { spec: { storage: { claimName: 5 }, desiredState: 'Nope' } }, ct: CT.merge },
  { what: 'MinecraftServer: spec not an object', method: 'PATCH', path: `${MC}/ok`, body: { spec: 'x' }, ct: CT.merge },
  { what: 'MinecraftServer status: wrong types', method: 'PATCH', path: `${MC}/ok/status`, body: { status: { ready: 'yes', phase: 3 } }, ct: CT.merge },
  { what: 'MinecraftServer status: spec is ignored', method: 'PATCH', path: `${MC}/ok/status`, body: { spec: { desiredState: 'Nope' }, status: { ready: true } }, ct: CT.merge },
  { what: 'MinecraftServer: strategic merge', method: 'PATCH', path: `${MC}/ok`, body: {}, ct: CT.strategic },
  { what: 'MinecraftServer: application/json patch', method: 'PATCH', path: `${MC}/ok`, body: {}, ct: 'application/json' },
  { what: 'MinecraftServer: JSON patch removing a missing annotation', method: 'PATCH', path: `${MC}/ok`, body: [{ op: 'remove', path: '/metadata/annotations/x' }], ct: CT.json },
  { what: 'MinecraftServer: merge patch deleting a missing annotation', method: 'PATCH', path: `${MC}/ok`, body: { metadata: { annotations: { x: null } } }, ct: CT.merge },
  {
    what: 'MinecraftServer: a bad annotation key',
    method: 'PATCH',
    path: `${MC}/ok`,
    body: { metadata: { annotations: { 'x~y': 'z' } } },
    ct: CT.merge,
    // v1.20 lists the same cause three times (the message once); compare the message.
    check: (r, e) => {
      assert.equal(r.status, 422);
      assert.equal(e.status, 422);
      assert.equal(oneSpace(r.body.message), e.body.message);
    },
  },
  {
    what: 'MinecraftServer: apply without fieldManager',
    method: 'PATCH',
    path: `${MC}/ok`,
    body: 'apiVersion: felis.lolicon.best/v1alpha1\nkind: MinecraftServer\nmetadata:\n  name: ok\n',
    ct: CT.apply,
  },
  { what: 'MinecraftServer: stale resourceVersion', method: 'PATCH', path: `${MC}/ok`, body: { metadata: { resourceVersion: '1' } }, ct: CT.merge },
  { what: 'MinecraftServer: cleared resourceVersion', method: 'PATCH', path: `${MC}/ok`, body: { metadata: { resourceVersion: '' } }, ct: CT.merge },
  { what: 'MinecraftServer: PUT with a stale resourceVersion', method: 'PUT', path: `${MC}/ok`, body: { ...mc('ok'), metadata: { name: 'ok', resourceVersion: '1' } } },
  { what: 'MinecraftServer: PUT without resourceVersion', method: 'PUT', path: `${MC}/ok`, body: mc('ok') },
  { what: 'MinecraftServer: list with limit', method: 'GET', path: `${MC}?limit=1` },

  // Delegated auth: TokenReview and SubjectAccessReview (kubernetes auth mode).
  { what: 'anonymous: TokenReview', method: 'POST', path: TR, body: { spec: { token: 'x' } }, who: 'anon' },
  { what: 'anonymous: SubjectAccessReview', method: 'POST', path: SAR, body: { spec: { user: 'a', nonResourceAttributes: { path: '/x', verb: 'get' } } }, who: 'anon' },
  { what: 'TokenReview without a token', method: 'POST', path: TR, body: { spec: {} } },
  { what: 'TokenReview: an unknown token', method: 'POST', path: TR, body: { spec: { token: 'not-a-token', audiences: ['felis-world'] } }, check: reviewed(false) },
  { what: "TokenReview: the apiserver's own token, for another audience", method: 'POST', path: TR, body: { spec: { token: 'FUNCTION_TOKEN', audiences: ['felis-world'] } }, check: reviewed(false) },
  { what: "TokenReview: the apiserver's own token, for its own audience", method: 'POST', path: TR, body: { spec: { token: 'FUNCTION_TOKEN' } }, check: reviewed(true) },
  { what: 'SubjectAccessReview without user or attributes', method: 'POST', path: SAR, body: { spec: {} } },
  {
    what: 'SubjectAccessReview with both kinds of attributes',
    method: 'POST',
    path: SAR,
    body: { kind: 'SubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', spec: { user: 'a', resourceAttributes: { verb: 'get' }, nonResourceAttributes: { path: '/x', verb: 'get' } } },
  },
  {
    what: "SubjectAccessReview: the function's own grants",
    method: 'POST',
    path: SAR,
    body: { spec: { user: FN_USER, resourceAttributes: { namespace: 'minecraft', verb: 'list', group: 'batch', resource: 'jobs' } } },
    check: allowed(true),
  },
  {
    what: 'SubjectAccessReview: not granted',
    method: 'POST',
    path: SAR,
    body: { spec: { user: FN_USER, resourceAttributes: { namespace: 'minecraft', verb: 'delete', group: 'batch', resource: 'jobs' } } },
    check: allowed(false),
  },
];

describe('the emulation answers as the real apiserver does', { skip: ENV ? false : 'cluster tier only (set by npm run test:cluster)' }, () => {
  let emb: EmbeddedCluster;
  let dataDir: string;
  const clients = {} as Record<'real' | 'emb', Record<Who, AdminClient>>;
  let env: ReturnType<typeof readControlPlaneEnv>;

  before(async () => {
    env = readControlPlaneEnv(ENV!);
    dataDir = mkdtempSync(join(tmpdir(), 'felis-parity-'));
    emb = await startCluster({ dataDir, rbacManifest: join(ROOT, 'knative/rbac.yaml'), podTiming: () => ({ unscheduledMs: 3_600_000, creatingMs: 0 }) });
    clients.real = {
      admin: new AdminClient(env.K8S_URL, env.ADMIN_TOKEN),
      fn: new AdminClient(env.K8S_URL, env.FUNCTION_TOKEN),
      anon: new AdminClient(env.K8S_URL, ''),
      bad: new AdminClient(env.K8S_URL, 'not-a-token'),
    };
    clients.emb = {
      admin: new AdminClient(emb.url, emb.adminToken),
      fn: new AdminClient(emb.url, emb.tokenFor('minecraft', 'felis-world')),
      anon: new AdminClient(emb.url, ''),
      bad: new AdminClient(emb.url, 'not-a-token'),
    };
    await wipeNamespace(clients.real.admin);
  });
  after(async () => {
    for (const side of Object.values(clients)) for (const c of Object.values(side)) await c.close();
    await emb?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** Each side's own function token stands in for `FUNCTION_TOKEN` in a body. */
  const send = (c: AdminClient, k: Case) => {
    const fnToken = c === clients.real.admin ? env.FUNCTION_TOKEN : emb.tokenFor('minecraft', 'felis-world');
    const body = k.body === undefined ? undefined : typeof k.body === 'string' ? k.body : JSON.stringify(k.body).replaceAll('FUNCTION_TOKEN', fnToken);
    return c.call(k.method, k.path, body, k.ct ?? 'application/json');
  };

  test(`${CASES.length} requests, answer by answer`, async (t) => {
    const failures: string[] = [];
    for (const k of CASES) {
      const who = k.who ?? 'admin';
      const r = await send(clients.real[who], k);
      const e = await send(clients.emb[who], k);
      try {
        if (k.check) k.check(r, e);
        else {
          assert.equal(e.status, r.status, 'status');
          assert.equal(e.headers['content-type'], r.headers['content-type'], 'content-type');
          assert.deepEqual(statusView(e), statusView(r), 'Status');
          if (r.body?.kind !== 'Status' && r.status >= 300) assert.equal(e.text, r.text, 'body');
        }
      } catch (err) {
        failures.push(`${k.what} (${k.method} ${k.path}):\n  real     ${r.status} ${r.text.slice(0, 600)}\n  embedded ${e.status} ${e.text.slice(0, 600)}\n  ${(err as Error).message.split('\n')[0]}`);
      }
    }
    t.diagnostic(`${CASES.length - failures.length}/${CASES.length} answers agree`);
    assert.deepEqual(failures, [], failures.join('\n\n'));
  });

  test('a Job and the Pod its controller creates: the fields the product reads agree', async () => {
    const body = job(
      'shape',
      { spec: { activeDeadlineSeconds: 100, ttlSecondsAfterFinished: 50 } },
      {
        serviceAccountName: 'felis-restore',
        automountServiceAccountToken: false,
        containers: [{ name: 'files', image: 'felis/x:dev', resources: { requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: '500m', memory: '256Mi' } } }],
      },
    );
    const views: Record<string, unknown>[] = [];
    for (const side of ['real', 'emb'] as const) {
      const c = clients[side].admin;
      const created = (await c.must('POST', J, body)).body;
      let pod: any;
      for (let i = 0; i < 100 && !pod; i++) {
        pod = (await c.must('GET', `${P}?labelSelector=job-name%3Dshape`)).body.items[0];
        if (!pod) await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(pod, `${side}: the Job controller created a Pod`);
      const list = (await c.must('GET', `${J}?labelSelector=job-name%3Dshape`)).body;
      views.push({
        jobTemplateServiceAccount: created.spec.template.spec.serviceAccount,
        jobParallelism: created.spec.parallelism,
        jobCompletions: created.spec.completions,
        jobTemplateLabels: Object.keys(created.spec.template.metadata.labels)
          .filter((l) => !l.startsWith('batch.kubernetes.io/'))
          .sort(),
        podName: /^shape-[bcdfghjklmnpqrstvwxz2456789]{5}$/.test(pod.metadata.name),
        podOwner: pod.metadata.ownerReferences.map((o: any) => ({ kind: o.kind, name: o.name, controller: o.controller, blockOwnerDeletion: o.blockOwnerDeletion })),
        podPhase: pod.status.phase,
        podQos: pod.status.qosClass,
        podServiceAccount: [pod.spec.serviceAccountName, pod.spec.serviceAccount],
        podPullPolicy: pod.spec.containers[0].imagePullPolicy,
        podNodeName: pod.spec.nodeName ?? null,
        listKind: list.kind,
        listItemKind: list.items[0].kind ?? null,
      });
    }
    assert.deepEqual(views[1], views[0]);
  });
});

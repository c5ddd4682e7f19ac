/**
 * The client-node reviewer against a stub apiserver on loopback: what it sends, how it reads the
 * answers, and that an apiserver which errs, hangs or answers for another audience is never a yes.
 */

import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { AuthUnavailableError, KubeReviewer } from './reviewer.ts';

async function stub(handle: (path: string, body: any, res: ServerResponse) => void) {
  const seen: Array<{ path: string; body: any; auth: string | undefined }> = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString() || '{}');
      seen.push({ path: req.url ?? '', body, auth: req.headers.authorization });
      handle(req.url ?? '', body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'function-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return { kc, seen, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

const json = (res: ServerResponse, code: number, body: unknown) => {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

test('a TokenReview asks for the audience as the function, and a user comes back only when the audience is confirmed', async (t) => {
  let audiences: string[] | undefined = ['felis-world'];
  const s = await stub((_p, body, res) => json(res, 201, { ...body, status: { authenticated: true, user: { username: 'alice', uid: 'u1', groups: ['g'] }, ...(audiences ? { audiences } : {}) } }));
  t.after(() => s.close());
  const r = new KubeReviewer(s.kc);
  assert.deepEqual(await r.authenticate('alice-token', 'felis-world'), { username: 'alice', uid: 'u1', groups: ['g'], extra: undefined });
  assert.equal(s.seen[0]!.path, '/apis/authentication.k8s.io/v1/tokenreviews');
  assert.deepEqual(s.seen[0]!.body.spec, { token: 'alice-token', audiences: ['felis-world'] });
  assert.equal(s.seen[0]!.auth, 'Bearer function-token');
  // An authenticator that ignores audiences answers without ours: not authenticated for us.
  audiences = undefined;
  assert.equal(await r.authenticate('alice-token', 'felis-world'), undefined);
  audiences = ['https://kubernetes.default.svc'];
  assert.equal(await r.authenticate('alice-token', 'felis-world'), undefined);
});

test('a SubjectAccessReview carries the user, groups, uid and the attributes; denied or unset is no', async (t) => {
  let status: object = { allowed: true };
  const s = await stub((_p, body, res) => json(res, 201, { ...body, status }));
  t.after(() => s.close());
  const r = new KubeReviewer(s.kc);
  const who = { username: 'alice', uid: 'u1', groups: ['g'] };
  const attrs = { kind: 'resource', group: 'felis.lolicon.best', resource: 'minecraftservers', subresource: 'files', verb: 'update', namespace: 'minecraft', name: 'survival' } as const;
  assert.equal(await r.authorize(who, attrs), true);
  assert.equal(s.seen[0]!.path, '/apis/authorization.k8s.io/v1/subjectaccessreviews');
  assert.deepEqual(s.seen[0]!.body.spec, {
    user: 'alice',
    groups: ['g'],
    uid: 'u1',
    resourceAttributes: { group: 'felis.lolicon.best', resource: 'minecraftservers', subresource: 'files', verb: 'update', namespace: 'minecraft', name: 'survival' },
  });
  status = { allowed: false, evaluationError: 'clusterrole "gone" not found' };
  assert.equal(await r.authorize(who, attrs), false);
  status = { allowed: true, denied: true };
  assert.equal(await r.authorize(who, attrs), false);
  status = { allowed: true };
  assert.equal(await r.authorize(who, { kind: 'nonresource', path: '/felis-world/settle', verb: 'post' }), true);
  assert.deepEqual(s.seen.at(-1)!.body.spec.nonResourceAttributes, { path: '/felis-world/settle', verb: 'post' });
});

test('an apiserver error, or one refusing the function itself, is unavailable, never a decision', async (t) => {
  let code = 500;
  const s = await stub((_p, _b, res) => json(res, code, { kind: 'Status', code, message: 'boom' }));
  t.after(() => s.close());
  const r = new KubeReviewer(s.kc);
  await assert.rejects(r.authenticate('x', 'felis-world'), AuthUnavailableError);
  code = 403; // the function lacks system:auth-delegator
  await assert.rejects(r.authenticate('x', 'felis-world'), AuthUnavailableError);
  await assert.rejects(r.authorize({ username: 'a', groups: [] }, { kind: 'nonresource', path: '/x', verb: 'get' }), AuthUnavailableError);
});

test('an apiserver that does not answer is unavailable after the timeout, not a hung request', async (t) => {
  const s = await stub(() => {
    /* never answers */
  });
  t.after(() => s.close());
  const t0 = Date.now();
  await assert.rejects(new KubeReviewer(s.kc, 200).authenticate('x', 'felis-world'), /took longer than 200 ms/);
  assert.ok(Date.now() - t0 < 2000);
});

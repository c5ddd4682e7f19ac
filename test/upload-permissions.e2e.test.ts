/**
 * Upload sessions and the read permission, end to end in kubernetes auth mode: `GET
 * .../files/uploads/{id}` needs only `get files`, so it must never start a receiver (a read-write
 * Job that holds the world). It answers from a receiver that already serves, and otherwise from
 * the Job list: no Job was ever made for the id → 404 `upload_not_found`; the session's receivers
 * have all ended → 409 `upload_paused` (only a part or a commit, which need `update`, resumes it).
 * Jobs are counted through the real client-node before and after.
 */

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AuthorizationV1Api, BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { jsonCall } from '../lib/testing/json-call.ts';
import { q, REAL, ROOT, type Stack, startStack, tierMs, until } from './support/stack.ts';

const NS = 'minecraft';
const user = (sa: string) => `system:serviceaccount:${NS}:${sa}`;
const sha = (b: Buffer) => createHash('sha256').update(b).digest();
const write = (text: string) => ({ content: Buffer.from(text).toString('base64'), content_sha256: sha(Buffer.from(text)).toString('hex') });

const BINDINGS = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: felis-world-e2e-uploads-auth-delegator }
subjects: [{ kind: ServiceAccount, name: felis-world, namespace: ${NS} }]
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:auth-delegator }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: e2e-up-viewer, namespace: ${NS} }
subjects: [{ kind: ServiceAccount, name: e2e-up-viewer, namespace: ${NS} }]
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: felis-world-viewer }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: e2e-up-editor, namespace: ${NS} }
subjects: [{ kind: ServiceAccount, name: e2e-up-editor, namespace: ${NS} }]
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: felis-world-editor }
`;

describe('upload sessions and the read permission', () => {
  let s: Stack;
  let batch: BatchV1Api;
  let core: CoreV1Api;
  const tokens: Record<string, string> = {};
  const as = (who: string, method: string, path: string, body?: unknown) => jsonCall((p, init) => fetch(s.url + p, init), tokens[who]!, method, path, body);
  /** Every Job in the namespace, by name. */
  const jobNames = async () => new Set((await batch.listNamespacedJob({ namespace: NS })).items.map((j) => j.metadata!.name!));
  const uploadJobs = async () => (await batch.listNamespacedJob({ namespace: NS, labelSelector: 'felis.lolicon.best/files-mode=upload' })).items.map((j) => j.metadata!.name!).sort();

  before(async () => {
    s = await startStack({ browse: {}, uploads: { idleSeconds: 120, lifetimeSeconds: 600 }, authEnv: { FELIS_AUTH_MODE: 'kubernetes', FELIS_AUTH_DENY_TTL_SECONDS: '1' } });
    await s.cluster.applyRbac(readFileSync(join(ROOT, 'knative/examples/roles.yaml'), 'utf8') + '---\n' + BINDINGS);
    const kc = s.cluster.kubeConfig(s.cluster.adminToken);
    batch = kc.makeApiClient(BatchV1Api);
    core = kc.makeApiClient(CoreV1Api);
    const sar = kc.makeApiClient(AuthorizationV1Api);
    for (const [sa, verb] of [
      ['e2e-up-viewer', 'get'],
      ['e2e-up-editor', 'update'],
    ] as const) {
      tokens[sa] = await s.cluster.requestToken(NS, sa, ['felis-world']);
      await until(
        async () => {
          const r = await sar.createSubjectAccessReview({
            body: { spec: { user: user(sa), resourceAttributes: { group: 'felis.lolicon.best', resource: 'minecraftservers', subresource: 'files', verb, namespace: NS, name: 'survival' } } },
          });
          return r.status?.allowed ? true : undefined;
        },
        `RBAC for ${sa}`,
        15_000,
      );
    }
  });
  after(async () => {
    if (s) {
      await s.cluster.deleteRbac('ClusterRoleBinding', 'felis-world-e2e-uploads-auth-delegator');
      for (const b of ['e2e-up-viewer', 'e2e-up-editor']) await s.cluster.deleteRbac('RoleBinding', b, NS);
    }
    await s?.close();
  });

  test('a status call for an id no session ever had is 404 and creates no Job, for a viewer and an editor alike', async () => {
    const before = await jobNames();
    for (const who of ['e2e-up-viewer', 'e2e-up-editor']) {
      const r = await as(who, 'GET', `/api/v1/servers/survival/files/uploads/${randomBytes(16).toString('hex')}`);
      assert.equal(r.status, 404, `${who}: ${r.text}`);
      assert.equal(r.body.error.code, 'upload_not_found');
    }
    // An editor's part or cancel for such an id is refused the same way, before any Job.
    const p = Buffer.from('x');
    const part = await fetch(`${s.url}/api/v1/servers/survival/files/uploads/${randomBytes(16).toString('hex')}?offset=0`, {
      method: 'PUT',
      body: p,
      headers: { authorization: `Bearer ${tokens['e2e-up-editor']}`, 'content-digest': `sha-256=:${sha(p).toString('base64')}:` },
    });
    assert.equal(part.status, 404, await part.text());
    assert.equal((await as('e2e-up-editor', 'DELETE', `/api/v1/servers/survival/files/uploads/${randomBytes(16).toString('hex')}`)).status, 404);
    assert.deepEqual(
      [...(await jobNames())].filter((n) => !before.has(n)),
      [],
      'no Job was created',
    );
  });

  test("a viewer's status of a real session answers from its receiver, or 409 once the receiver is gone, and never starts one; a loop of them does not block the editor's writes", async () => {
    const b = await as('e2e-up-editor', 'POST', `/api/v1/servers/survival/files/uploads?path=${q('plugins/perm.bin')}`, { size: 10 });
    assert.equal(b.status, 201, b.text);
    const id = b.body.id as string;
    const p = Buffer.from('01234');
    const r = await fetch(`${s.url}/api/v1/servers/survival/files/uploads/${id}?offset=0`, {
      method: 'PUT',
      body: p,
      headers: { authorization: `Bearer ${tokens['e2e-up-editor']}`, 'content-digest': `sha-256=:${sha(p).toString('base64')}:` },
    });
    assert.equal(r.status, 200, await r.text());
    // While the receiver serves, a viewer sees the session through it.
    const live = await as('e2e-up-viewer', 'GET', `/api/v1/servers/survival/files/uploads/${id}`);
    assert.equal(live.status, 200, live.text);
    assert.equal(live.body.received, 5);
    const receivers = await uploadJobs();
    assert.equal((await batch.listNamespacedJob({ namespace: NS, labelSelector: `felis.lolicon.best/upload-session=${id}` })).items.length, 1, 'one receiver');

    // The receiver is lost: the session waits on the disk, and nothing holds the world.
    const sel = `felis.lolicon.best/upload-session=${id}`;
    // A real Job controller of this tier (v1.20) replaces a deleted Pod instead of failing the Job,
    // so there the receiver is ended by the editor's cancel, and the session is then gone (404).
    if (REAL) assert.equal((await as('e2e-up-editor', 'DELETE', `/api/v1/servers/survival/files/uploads/${id}`)).status, 204);
    else
      for (const pod of (await core.listNamespacedPod({ namespace: NS, labelSelector: sel })).items)
        await core.deleteNamespacedPod({ namespace: NS, name: pod.metadata!.name!, gracePeriodSeconds: 0 });
    await until(
      async () =>
        (await batch.listNamespacedJob({ namespace: NS, labelSelector: sel })).items.every((j) =>
          j.status?.conditions?.some((c) => (c.type === 'Failed' || c.type === 'Complete') && c.status === 'True'),
        )
          ? true
          : undefined,
      'the receiver Job to end',
      tierMs(20_000, 60_000),
    );
    await until(async () => ((await as('e2e-up-editor', 'GET', '/api/v1/servers/survival/holder')).body.held === false ? true : undefined), 'the world to be free', tierMs(10_000, 30_000));

    const before = await jobNames();
    const paused = await as('e2e-up-viewer', 'GET', `/api/v1/servers/survival/files/uploads/${id}`);
    assert.equal(paused.status, REAL ? 404 : 409, paused.text);
    assert.equal(paused.body.error.code, REAL ? 'upload_not_found' : 'upload_paused');
    assert.deepEqual(
      [...(await jobNames())].filter((n) => !before.has(n)),
      [],
      'the status call started no receiver',
    );

    // A viewer looping on status calls (the real id and random ones) while the editor writes.
    let looping = true;
    const loop = (async () => {
      let n = 0;
      while (looping) {
        const ids = [id, randomBytes(16).toString('hex')];
        const r = await as('e2e-up-viewer', 'GET', `/api/v1/servers/survival/files/uploads/${ids[n++ % 2]}`);
        assert.ok(r.status === 404 || r.status === 409, r.text);
      }
      return n;
    })();
    try {
      for (let i = 0; i < 6; i++) {
        const w = await as('e2e-up-editor', 'PUT', `/api/v1/servers/survival/file?path=${q(`perm-${i}.txt`)}`, write(`w${i}`));
        assert.equal(w.status, 200, `write ${i}: ${w.text}`);
      }
    } finally {
      looping = false;
    }
    assert.ok((await loop) > 0);
    assert.deepEqual(await uploadJobs(), receivers, 'no receiver was started by the viewer');

    // The editor's cancel may resume the session (update files): it does, and ends it (on the real
    // tier it was cancelled above already, so it is gone).
    const gone = await as('e2e-up-editor', 'DELETE', `/api/v1/servers/survival/files/uploads/${id}`);
    assert.equal(gone.status, REAL ? 404 : 204, gone.text);
  });
});

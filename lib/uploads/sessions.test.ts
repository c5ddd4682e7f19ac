import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { mapDomainError } from '../http/error-map.ts';
import { endedAnswer, UploadSessions } from './sessions.ts';

const ID = 'cd'.repeat(16);
const job = (name: string, at: string, outcome: 'Complete' | 'Failed' | undefined): V1Job => ({
  metadata: { name, creationTimestamp: new Date(at), labels: {} },
  status: outcome ? { conditions: [{ type: outcome, status: 'True' }] } : {},
});

/** A namespace of the session's Jobs (no Pods); records every Job create. */
function sessions(jobs: V1Job[]) {
  const created: V1Job[] = [];
  const api = {
    createJob: async (_ns: string, j: V1Job) => void created.push(j),
    listJobs: async () => jobs,
    listPods: async (): Promise<V1Pod[]> => [],
  };
  const cfg = { keyFile: '/nonexistent', startTimeoutMs: 500, idleSeconds: 60, lifetimeSeconds: 600 };
  const settings = { namespace: 'minecraft', image: 'i', command: ['felis'] } as never;
  return { ss: new UploadSessions(api, settings, cfg, { key: Buffer.alloc(32, 1), port: 1 }), created };
}

test('a session no Job was ever made for is 404 upload_not_found, whoever asks, and nothing is created', async () => {
  const { ss, created } = sessions([]);
  let resumed = 0;
  for (const resume of [undefined, async () => void resumed++]) {
    await assert.rejects(
      ss.call('survival', ID, { method: 'GET', path: '/session' }, new AbortController().signal, resume),
      (e: unknown) => mapDomainError(e)?.status === 404 && mapDomainError(e)?.code === 'upload_not_found',
    );
  }
  assert.equal(resumed, 0);
  assert.equal(created.length, 0);
});

test('a status call for a session whose receivers ended starts none: 409 after a lost receiver, 404 after one that ended by itself', async () => {
  const lost = sessions([job('a', '2026-12-01T10:00:00Z', 'Complete'), job('b', '2026-12-01T10:05:00Z', 'Failed')]);
  await assert.rejects(
    lost.ss.call('survival', ID, { method: 'GET', path: '/session' }, new AbortController().signal),
    (e: unknown) => mapDomainError(e)?.status === 409 && mapDomainError(e)?.code === 'upload_paused',
  );
  assert.equal(lost.created.length, 0);
  const over = sessions([job('a', '2026-12-01T10:00:00Z', 'Failed'), job('b', '2026-12-01T10:05:00Z', 'Complete')]);
  await assert.rejects(
    over.ss.call('survival', ID, { method: 'GET', path: '/session' }, new AbortController().signal),
    (e: unknown) => mapDomainError(e)?.status === 404 && mapDomainError(e)?.code === 'upload_not_found',
  );
  assert.equal(over.created.length, 0);
  assert.equal(endedAnswer([job('only', '2026-12-01T10:00:00Z', 'Failed')]).code, 'upload_paused');
});

test('a part for a session whose receiver was lost resumes it through the caller-supplied resume', async () => {
  const { ss } = sessions([job('a', '2026-12-01T10:00:00Z', 'Failed')]);
  let resumed = 0;
  // The fake never brings a receiver up: after one resume the call gives up with 404.
  await assert.rejects(
    ss.call('survival', ID, { method: 'DELETE', path: '/session' }, new AbortController().signal, async () => void resumed++),
    (e: { code: string }) => e.code === 'upload_not_found',
  );
  assert.equal(resumed, 1);
});

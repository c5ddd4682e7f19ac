import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { committedOp } from './committed.ts';

const SESSION = 'ab'.repeat(16);
const job = (o: { path?: string; complete?: boolean; op?: string; at?: string }): V1Job =>
  ({
    metadata: {
      creationTimestamp: new Date(o.at ?? '2026-12-01T10:00:00Z'),
      labels: { 'felis.lolicon.best/files-op': 's1', 'felis.lolicon.best/files-mode': 'read', 'felis.lolicon.best/upload-session': SESSION, ...(o.op ? { 'felis.lolicon.best/files-op': o.op } : {}) },
      annotations: { 'felis.lolicon.best/files-path': o.path ?? 'a.bin' },
    },
    status: o.complete === false ? {} : { conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: new Date('2026-12-01T10:01:00Z') }] },
  }) as unknown as V1Job;

const RESULT = { sha256: 'ab'.repeat(32), files: 1, bytes: 7 };
const NOW = new Date('2026-12-01T11:00:00Z');

test('a committed upload is the op the listing will show: succeeded, with its totals', () => {
  assert.deepEqual(committedOp(SESSION, 's1', 'a.bin', 7, RESULT, [job({})], NOW), {
    id: SESSION,
    op: 'upload',
    path: 'a.bin',
    state: 'succeeded',
    started_at: '2026-12-01T10:00:00Z',
    finished_at: '2026-12-01T10:01:00Z',
    done: 7,
    total: 7,
    files: 1,
    bytes: 7,
  });
});

test('a receiver Job not yet marked finished is a running op with all its bytes in', () => {
  const v = committedOp(SESSION, 's1', 'a.bin', 7, RESULT, [job({ complete: false })], NOW);
  assert.equal(v.state, 'running');
  assert.equal(v.done, 7);
  assert.equal(v.finished_at, undefined);
});

test('a resumed receiver that carries no path is named by the session; another op id or no Job is a just-started op', () => {
  assert.equal(committedOp(SESSION, 's1', 'plugins/a.bin', 7, RESULT, [job({ path: '' })], NOW).path, 'plugins/a.bin');
  for (const jobs of [[], [job({})]]) {
    assert.deepEqual(committedOp(SESSION, jobs.length ? 's2' : 's1', 'a.bin', 7, RESULT, jobs, NOW), {
      id: SESSION,
      op: 'upload',
      path: 'a.bin',
      state: 'running',
      started_at: '2026-12-01T11:00:00Z',
      done: 0,
      total: 0,
    });
  }
});

test('a resumed session is one op: its id the session id, begun when its first receiver was, told by the receiver that committed', () => {
  const lost = { ...job({ op: 's0', at: '2026-12-01T09:00:00Z' }), status: { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] } } as V1Job;
  const v = committedOp(SESSION, 's1', 'a.bin', 7, RESULT, [lost, job({})], NOW);
  assert.deepEqual([v.id, v.state, v.started_at, v.done], [SESSION, 'succeeded', '2026-12-01T09:00:00Z', 7]);
});

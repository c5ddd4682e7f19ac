import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { formatRecoveredLine } from '../protocol/recovered.ts';
import { formatResultLine } from '../protocol/result.ts';
import { recoveriesIn } from './list.ts';

const job = (op: string): V1Job => ({ metadata: { labels: { 'felis.lolicon.best/files-op': op } } });

test('a listed op that recovered the world names, from its own log, what became of the ops it found', () => {
  const a = '00000000000000aa';
  const b = '00000000000000bb';
  const got = recoveriesIn([
    { job: job(a), log: '' },
    { job: job(b), log: formatRecoveredLine({ op: a, kind: 'unzip', now: 'old' }) + formatResultLine({ files: 1 }) },
    // An op never recovers itself: a line naming its own id is noise.
    { job: job(a), log: formatRecoveredLine({ op: a, kind: 'unzip', now: 'new' }) },
  ]);
  assert.deepEqual([...got], [[a, { now: 'old', by: b }]]);
});

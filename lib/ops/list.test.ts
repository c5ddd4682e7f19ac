import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { formatRecoveredLine } from '../protocol/recovered.ts';
import { formatProgressLine, formatResultLine, lastProgress, lastResultPayload } from '../protocol/result.ts';
import { keptLines, recoveriesIn } from './list.ts';

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

test('a tail is kept only for what the op view reads from it: the last good progress, recoveries, the last result', () => {
  const rec = formatRecoveredLine({ op: '00000000000000aa', kind: 'unzip', now: 'old' });
  const log = `noise\n${formatProgressLine({ done: 1, total: 9 })}${formatProgressLine({ done: 5, total: 9 })}FELIS-FILES-PROGRESS: {"done":7,"tot\n${rec}${formatResultLine({ code: 'exists' })}more noise\n${formatResultLine({ files: 2 })}`;
  const kept = keptLines(log);
  assert.equal(kept, `${formatProgressLine({ done: 5, total: 9 })}${rec}${formatResultLine({ files: 2 })}`);
  assert.deepEqual([lastProgress(kept), lastResultPayload(kept)], [lastProgress(log), lastResultPayload(log)]);
  assert.equal(keptLines('nothing of ours\n'), '');
});

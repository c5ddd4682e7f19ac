import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job, V1JobCondition, V1Pod } from '@kubernetes/client-node';
import { formatProgressLine, formatResultLine, RESULT_PREFIX, type Result } from '../protocol/result.ts';
import { filesMayHaveRun, killedForMemory, newestPodPerOp, opState } from './state.ts';

const STARTED = '2026-12-01T05:00:00Z';
const ENDED = '2026-12-01T05:10:00Z';

function job(conditions: Array<Partial<V1JobCondition> & { type: string }> = []): V1Job {
  return {
    metadata: {
      name: 'files-survival-00000000000000aa',
      creationTimestamp: new Date(STARTED),
      labels: { 'felis.lolicon.best/files-op': '00000000000000aa', 'felis.lolicon.best/files-mode': 'unzip' },
      annotations: { 'felis.lolicon.best/files-path': 'maps/pack.zip' },
    },
    status: { conditions: conditions.map((c) => ({ status: 'True', lastTransitionTime: new Date(ENDED), ...c })) },
  };
}

function pod(containers: Array<{ name: string; reason?: string; exitCode?: number }>): V1Pod {
  return {
    metadata: { name: 'p', labels: {} },
    status: {
      phase: 'Failed',
      containerStatuses: containers.map((c) => ({
        name: c.name,
        image: 'x',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: { terminated: { exitCode: c.exitCode ?? 137, reason: c.reason } },
      })),
    },
  };
}

const progress = (done: number, total: number) => formatProgressLine({ done, total });
const result = (r: Result) => formatResultLine(r);
const DEADLINE = { type: 'Failed', reason: 'DeadlineExceeded' };
const BACKOFF = { type: 'FailureTarget', reason: 'BackoffLimitExceeded' };

test('identity comes from the labels, the path annotation and the creation time', () => {
  const s = opState(job(), undefined, '');
  assert.equal(s.id, '00000000000000aa');
  assert.equal(s.op, 'unzip');
  assert.equal(s.path, 'maps/pack.zip');
  assert.equal(s.started?.toISOString(), '2026-12-01T05:00:00.000Z');
});

test("an upload session's receiver (mode read: it holds nothing by itself) is listed as the upload it is", () => {
  const j = job();
  j.metadata!.labels = { ...j.metadata!.labels, 'felis.lolicon.best/files-mode': 'read', 'felis.lolicon.best/upload-session': 'c'.repeat(32) };
  assert.equal(opState(j, undefined, '').op, 'upload');
  // Any other Job keeps its mode as its op.
  assert.equal(opState(job(), undefined, '').op, 'unzip');
});

test('running with progress, and before any progress (0/0)', () => {
  const s = opState(job(), undefined, `noise\n${progress(10, 100)}${progress(40, 100)}`);
  assert.deepEqual([s.state, s.done, s.total, s.finished, s.reason], ['running', 40, 100, undefined, '']);
  const none = opState(job(), undefined, '');
  assert.deepEqual([none.state, none.done, none.total], ['running', 0, 0]);
});

test('a condition that is not True does not end the op', () => {
  const s = opState(job([{ type: 'Failed', status: 'False', reason: 'DeadlineExceeded' }]), undefined, progress(1, 2));
  assert.equal(s.state, 'running');
  assert.equal(s.finished, undefined);
});

test('a malformed last progress line is skipped: the last well-formed one stands', () => {
  const log = `${progress(30, 90)}FELIS-FILES-PROGRESS: {"done":50,"tot\nFELIS-FILES-PROGRESS: {"done":"x","total":1}\n`;
  const s = opState(job(), undefined, log);
  assert.deepEqual([s.done, s.total], [30, 90]);
});

test('Complete or SuccessCriteriaMet with a clean result succeeds, with its finish time', () => {
  for (const type of ['Complete', 'SuccessCriteriaMet']) {
    const s = opState(job([{ type }]), undefined, `${progress(5, 5)}${result({ files: 3, bytes: 1200 })}`);
    assert.equal(s.state, 'succeeded', type);
    assert.deepEqual(s.result, { files: 3, bytes: 1200 });
    assert.equal(s.finished?.toISOString(), '2026-12-01T05:10:00.000Z');
    assert.equal(s.reason, '');
  }
});

test('a printed clean result wins over DeadlineExceeded and over an OOM kill', () => {
  const s = opState(job([DEADLINE]), undefined, result({ files: 1, bytes: 2 }));
  assert.equal(s.state, 'succeeded');
  const oom = opState(job([{ type: 'Failed', reason: 'BackoffLimitExceeded' }]), pod([{ name: 'files', reason: 'OOMKilled' }]), result({ files: 1 }));
  assert.equal(oom.state, 'succeeded');
});

test('a refusal result fails the op with the Result and no reason, whatever the condition', () => {
  const r = { code: 'archive_unsafe', error: 'entry escapes the target', entry: '../evil' };
  for (const c of [{ type: 'Complete' }, DEADLINE]) {
    const s = opState(job([c]), undefined, result(r));
    assert.equal(s.state, 'failed');
    assert.deepEqual(s.result, r);
    assert.equal(s.reason, '');
  }
});

test('the last result line counts, not the first', () => {
  const s = opState(job([{ type: 'Complete' }]), undefined, `${result({ code: 'no_space' })}${result({ files: 2 })}`);
  assert.equal(s.state, 'succeeded');
});

test('DeadlineExceeded without a result fails with that reason and keeps its progress; its Pod gone, the outcome is unknown', () => {
  const s = opState(job([DEADLINE]), undefined, progress(70, 100));
  assert.deepEqual([s.state, s.reason, s.done, s.total, s.outcomeUnknown], ['failed', 'DeadlineExceeded', 70, 100, true]);
  assert.equal(s.result, undefined);
});

test('a result decides the outcome: a success or a refusal is never unknown', () => {
  assert.equal(opState(job([{ type: 'Complete' }]), undefined, result({ files: 1 })).outcomeUnknown, false);
  const refused = opState(job([BACKOFF]), pod([{ name: 'files', reason: 'Error', exitCode: 1 }]), result({ code: 'exists', conflicts: ['a'] }));
  assert.deepEqual([refused.state, refused.outcomeUnknown, refused.result?.conflicts], ['failed', false, ['a']]);
});

test('without a result: unknown when the files container ran, or nobody can tell; known when it never ran', () => {
  const ran = opState(job([BACKOFF]), pod([{ name: 'files', reason: 'Error', exitCode: 137 }]), progress(3, 9));
  assert.deepEqual([ran.state, ran.reason, ran.outcomeUnknown], ['failed', 'BackoffLimitExceeded', true]);
  const startError = opState(job([BACKOFF]), pod([{ name: 'files', reason: 'StartError', exitCode: 128 }]), '');
  assert.deepEqual([startError.reason, startError.outcomeUnknown], ['BackoffLimitExceeded', false]);
  const waiting: V1Pod = {
    metadata: { name: 'w' },
    status: { phase: 'Pending', containerStatuses: [{ name: 'files', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }] },
  };
  assert.equal(opState(job([DEADLINE]), waiting, '').outcomeUnknown, false);
  assert.equal(filesMayHaveRun({ metadata: {}, status: { phase: 'Pending' } }), false, 'a Pod with no container status never ran one');
  assert.equal(filesMayHaveRun(undefined), true);
  // OOM is known well enough to act on (split the archive), not "unknown".
  assert.equal(opState(job([BACKOFF]), pod([{ name: 'files', reason: 'OOMKilled' }]), '').outcomeUnknown, false);
});

test('a Pod ended by a node restart names that reason, not BackoffLimitExceeded, and its outcome is unknown', () => {
  const p = pod([{ name: 'files', reason: 'ContainerStatusUnknown', exitCode: 137 }]);
  p.status!.reason = 'NodeRestarted';
  const s = opState(job([BACKOFF, { type: 'Failed', reason: 'BackoffLimitExceeded' }]), p, progress(500, 20000));
  assert.deepEqual([s.state, s.reason, s.outcomeUnknown, s.done], ['failed', 'NodeRestarted', true, 500]);
  // A reason that is not a plain word is not shown.
  p.status!.reason = 'bad reason\n';
  assert.equal(opState(job([BACKOFF]), p, '').reason, 'BackoffLimitExceeded');
});

test('FailureTarget with BackoffLimitExceeded; a Failed condition with no reason becomes Failed', () => {
  assert.equal(opState(job([BACKOFF]), undefined, '').reason, 'BackoffLimitExceeded');
  const s = opState(job([{ type: 'Failed' }]), undefined, '');
  assert.deepEqual([s.state, s.reason], ['failed', 'Failed']);
});

test('Complete without a log, or with an unparseable result, is ResultUnavailable', () => {
  assert.deepEqual([opState(job([{ type: 'Complete' }]), undefined, '').state, opState(job([{ type: 'Complete' }]), undefined, '').reason], ['failed', 'ResultUnavailable']);
  const garbled = opState(job([{ type: 'Complete' }]), undefined, `${RESULT_PREFIX}{\n`);
  assert.deepEqual([garbled.state, garbled.reason, garbled.result], ['failed', 'ResultUnavailable', undefined]);
  // A result of the wrong shape is no result either.
  const wrong = opState(job([{ type: 'Complete' }]), undefined, `${RESULT_PREFIX}{"files":"many"}\n`);
  assert.equal(wrong.reason, 'ResultUnavailable');
  // The program exits 0 only after printing its result: the op ran, its report is what is missing.
  assert.equal(wrong.outcomeUnknown, true);
  assert.equal(opState(job([{ type: 'Complete' }]), pod([{ name: 'files', reason: 'Completed', exitCode: 0 }]), '').outcomeUnknown, true);
});

test('OOMKilled in the files container, and only there, becomes the reason', () => {
  assert.equal(opState(job([BACKOFF]), pod([{ name: 'files', reason: 'OOMKilled' }]), '').reason, 'OOMKilled');
  assert.equal(opState(job([BACKOFF]), pod([{ name: 'files', reason: 'Error', exitCode: 1 }]), '').reason, 'BackoffLimitExceeded');
  assert.equal(
    opState(
      job([BACKOFF]),
      pod([
        { name: 'sidecar', reason: 'OOMKilled' },
        { name: 'files', reason: 'Error' },
      ]),
      '',
    ).reason,
    'BackoffLimitExceeded',
  );
  assert.equal(killedForMemory(undefined), false);
});

test('the newest Pod of each op id is the one used', () => {
  const p = (name: string, op: string, t: string): V1Pod => ({ metadata: { name, labels: { 'felis.lolicon.best/files-op': op }, creationTimestamp: new Date(t) } });
  const m = newestPodPerOp([p('a1', 'a', '2026-01-01T00:00:01Z'), p('a2', 'a', '2026-01-01T00:00:03Z'), p('a3', 'a', '2026-01-01T00:00:02Z'), p('b1', 'b', '2026-01-01T00:00:00Z')]);
  assert.equal(m.get('a')?.metadata?.name, 'a2');
  assert.equal(m.get('b')?.metadata?.name, 'b1');
});

test('an op stopped mid-placement takes the outcome the op that recovered the world reported: new is success, old a failure, never unknown', () => {
  const p = pod([{ name: 'files', reason: 'Error', exitCode: 137 }]);
  const forward = opState(job([BACKOFF]), p, progress(3, 9), { now: 'new', by: '00000000000000bb' });
  assert.deepEqual([forward.state, forward.outcomeUnknown, forward.recovered], ['succeeded', false, { now: 'new', by: '00000000000000bb' }]);
  const back = opState(job([BACKOFF]), p, '', { now: 'old', by: '00000000000000bb' });
  assert.deepEqual([back.state, back.outcomeUnknown, back.reason], ['failed', false, 'BackoffLimitExceeded']);
  // Recorded on the Job by the runner instead: the same.
  const annotated = job([BACKOFF]);
  annotated.metadata!.annotations!['felis.lolicon.best/recovered'] = 'gone';
  annotated.metadata!.annotations!['felis.lolicon.best/recovered-by'] = '00000000000000cc';
  assert.deepEqual(opState(annotated, p, '').recovered, { now: 'gone', by: '00000000000000cc' });
  // A malformed record is none.
  annotated.metadata!.annotations!['felis.lolicon.best/recovered-by'] = 'not an op';
  assert.deepEqual([opState(annotated, p, '').recovered, opState(annotated, p, '').outcomeUnknown], [undefined, true]);
  // A printed result decides over any record.
  const withResult = opState(job([BACKOFF]), p, result({ code: 'exists' }), { now: 'new', by: '00000000000000bb' });
  assert.deepEqual([withResult.state, withResult.recovered], ['failed', undefined]);
});

test('an op stopped while staging, that said so in its own log, was undone by itself: failed, never unknown', () => {
  const p = pod([{ name: 'files', reason: 'Error', exitCode: 1 }]);
  const own = `FELIS-FILES-RECOVERED: {"op":"00000000000000aa","kind":"unzip","now":"old"}\n`;
  const s = opState(job([BACKOFF]), p, own);
  assert.deepEqual([s.state, s.outcomeUnknown, s.recovered], ['failed', false, { now: 'old', by: '00000000000000aa' }]);
  // Another op's line in its log is not about itself.
  assert.equal(opState(job([BACKOFF]), p, own.replace('00000000000000aa', '00000000000000bb')).outcomeUnknown, true);
});

test('a pull (labelled mode read, with its own label) is op pull; staged it runs until its placement is recorded; an unreadable record is not left running', () => {
  const pull = (annotations: Record<string, string> = {}): V1Job => {
    const j = job([{ type: 'Complete' }]);
    j.metadata!.labels = { ...j.metadata!.labels, 'felis.lolicon.best/files-mode': 'read', 'felis.lolicon.best/files-pull': 'true' };
    j.metadata!.annotations = { ...j.metadata!.annotations, ...annotations };
    return j;
  };
  const log = progress(9, 9) + result({ staged: true, bytes: 9, to: 'plugins/a.jar' });
  const waiting = opState(pull(), undefined, log);
  assert.deepEqual([waiting.op, waiting.state, waiting.finished, waiting.result, waiting.done], ['pull', 'running', undefined, undefined, 9]);
  const placed = opState(pull({ 'felis.lolicon.best/pull-placed': '{"files":1,"bytes":9,"to":"plugins/a.jar"}' }), undefined, log);
  assert.deepEqual([placed.state, placed.result], ['succeeded', { files: 1, bytes: 9, to: 'plugins/a.jar' }]);
  const garbled = opState(pull({ 'felis.lolicon.best/pull-placed': '{"files":' }), undefined, log);
  assert.deepEqual([garbled.state, garbled.result?.code], ['failed', 'outcome_unknown']);
  // A pull that failed on its own shows its own result, whatever else.
  const failed = opState(pull(), undefined, result({ code: 'pull_failed', error: 'HTTP 404' }));
  assert.deepEqual([failed.state, failed.result?.code], ['failed', 'pull_failed']);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { asActor } from '../actor.ts';
import { withEvent } from '../events/scope.ts';
import { mapDomainError } from '../http/error-map.ts';
import type { Target } from '../job-spec/types.ts';
import type { Batch } from '../protocol/batch-env.ts';
import { decodeContentEnv } from '../protocol/content-env.ts';
import type { EditCall } from '../protocol/edit-call.ts';
import type { BatchOp } from '../protocol/ops.ts';
import { JobLostError } from '../runner/errors.ts';
import type { SyncRunner } from '../runner/sync-runner.ts';
import type { EditChannel } from './edit-channel.ts';
import { EditLostError } from './edit-channel.ts';
import { editorConfig, TARGET as T } from './editor.test-kit.ts';
import { FilesEditor } from './editor.ts';
import { withHeldLock } from './held-lock.ts';
import { lostMessage, OutcomeUnknownError } from './lost-change.ts';

const CFG = editorConfig({ trash: { enabled: true, seconds: 3600, actor: '' } });
const LOCK = 'file-write@2026-12-03T17:00:00Z';
const held = <R>(fn: () => Promise<R>, kind = 'file-write', server = 'survival', keep = () => {}) =>
  withHeldLock({ server, kind, value: kind === 'file-write' ? LOCK : 'config-write@2026-12-03T17:00:00Z', keep }, fn);

/** `null`: the session does not answer. */
function fakes(answer: string | null = '{}') {
  const jobs: V1Job[] = [];
  const calls: EditCall[] = [];
  const runner = {
    async findJobs() {
      return [];
    },
    async run(job: V1Job) {
      jobs.push(job);
      return '{"sha256":"0000000000000000000000000000000000000000000000000000000000000000"}';
    },
  } as unknown as SyncRunner;
  const edits: EditChannel = {
    async run(_t: Target, call: EditCall) {
      calls.push(call);
      return answer ?? undefined;
    },
  };
  return { editor: new FilesEditor(CFG, runner, undefined, undefined, edits), runner, jobs, calls };
}

test("a write under a held file-write lock goes to the edit session with the one-shot Job's own arguments, content, trash settings and actor", async () => {
  const f = fakes('{"sha256":"' + 'a'.repeat(64) + '"}');
  const sha = await held(() => asActor({ name: 'alice' }, () => f.editor.write(T, 'motd.txt', Buffer.from('hi\n'), { sha256: 'b'.repeat(64) })));
  assert.equal(sha, 'a'.repeat(64));
  assert.equal(f.jobs.length, 0, 'no Job');
  const call = f.calls[0]!;
  assert.deepEqual(call.argv, ['files', '--op', 'write', '--path', 'motd.txt', '--worlds-root', '/data', '--sha256', 'b'.repeat(64)]);
  assert.equal(call.lock, LOCK);
  assert.equal(decodeContentEnv(call.env).toString(), 'hi\n');
  assert.deepEqual([call.env.FELIS_TRASH, call.env.FELIS_TRASH_SECONDS, call.env.FELIS_ACTOR], ['on', '3600', 'alice']);
  assert.match(call.env.FELIS_OP_ID!, /^[0-9a-f]{16}$/);
  assert.equal(Object.keys(call.env).includes('NODE_OPTIONS'), false);
});

test("every small mutation asks the session; its answer is decoded as the Job's would be", async () => {
  const f = fakes('{"trash_id":"0190a1b2c3d4e5f6"}');
  assert.deepEqual(await held(() => f.editor.delete(T, 'old.txt')), { trashId: '0190a1b2c3d4e5f6' });
  await held(() => f.editor.mkdir(T, 'd'));
  await held(() => f.editor.rename(T, 'a', 'b'));
  await held(() => f.editor.batch(T, 'delete-many', { paths: ['a', 'b'] }));
  assert.deepEqual(
    f.calls.map((c) => c.argv[2]),
    ['delete', 'mkdir', 'rename', 'delete-many'],
  );
  assert.ok(f.calls[3]!.env.FELIS_BATCH_PARTS, "the items travel as in the Job's env");
  assert.equal(f.jobs.length, 0);
});

test("one-shot Jobs: without a held lock, for another server's lock, for a settings save (config-write), for a CloudEvent, when the session does not answer", async () => {
  const cases: [string, () => Promise<unknown>][] = [];
  const f = fakes();
  cases.push(['no lock', () => f.editor.mkdir(T, 'd')]);
  cases.push(['another server', () => held(() => f.editor.mkdir(T, 'd'), 'file-write', 'lobby')]);
  cases.push(['config-write', () => held(() => f.editor.mkdir(T, 'd'), 'config-write')]);
  cases.push(['event', () => held(() => withEvent('a'.repeat(48), () => f.editor.mkdir(T, 'd')))]);
  for (const [what, run] of cases) {
    const before = f.jobs.length;
    await run();
    assert.equal(f.jobs.length, before + 1, what);
  }
  assert.equal(f.calls.length, 0, 'the session was never asked');
  const none = fakes(null);
  await held(() => none.editor.mkdir(T, 'd'));
  assert.equal(none.calls.length, 1);
  assert.equal(none.jobs.length, 1, 'no answer: the one-shot Job made the change');
});

test('reads and the long ops never go to an edit session', async () => {
  const f = fakes();
  await held(async () => {
    await f.editor.list(T, '').catch(() => {});
    await f.editor.read(T, 'a').catch(() => {});
    await f.editor.trashRestore(T, '0190a1b2c3d4e5f6', undefined).catch(() => {});
  });
  assert.equal(f.calls.length, 0);
});

test('a change that may still be under way in the Pod keeps the lock until its grace; one whose program ended gives it back', async () => {
  for (const [inFlight, kept] of [
    [true, true],
    [false, false],
  ] as const) {
    let keeps = 0;
    const edits: EditChannel = {
      async run() {
        throw new EditLostError('edit session p ended a change without a result', inFlight);
      },
    };
    const ed = new FilesEditor(CFG, fakes().runner, undefined, undefined, edits);
    await assert.rejects(
      held(
        () => ed.mkdir(T, 'd'),
        'file-write',
        'survival',
        () => void keeps++,
      ),
      JobLostError,
    );
    assert.equal(keeps, kept ? 1 : 0, `inFlight ${inFlight}`);
  }
});

test('a batch whose session call or one-shot Job is lost without a result is 503 outcome_unknown with its op id; a one-step change keeps its 500', async () => {
  const lost = (inFlight: boolean): EditChannel => ({
    async run(_t: Target, call: EditCall) {
      lostCalls.push(call);
      throw new EditLostError('edit session p ended a change without a result', inFlight);
    },
  });
  const lostCalls: EditCall[] = [];
  for (const inFlight of [true, false]) {
    let keeps = 0;
    const ed = new FilesEditor(CFG, fakes().runner, undefined, undefined, lost(inFlight));
    const batches: [BatchOp, Batch][] = [
      ['delete-many', { paths: ['a', 'b'] }],
      ['move-many', { moves: [{ from: 'a', to: 'b' }] }],
      ['chmod-many', { files: [{ path: 'a', mode: '644' }] }],
    ];
    for (const [op, batch] of batches) {
      const err = await held(
        () => ed.batch(T, op, batch),
        'file-write',
        'survival',
        () => void keeps++,
      ).catch((e: unknown) => e);
      const opId = lostCalls.at(-1)!.env.FELIS_OP_ID!;
      assert.ok(err instanceof OutcomeUnknownError, `${op}: ${String(err)}`);
      assert.deepEqual(mapDomainError(err), { status: 503, code: 'outcome_unknown', message: lostMessage(op, opId), op: opId });
      assert.doesNotMatch(mapDomainError(err)!.message, /either not made or fully made|retry/);
    }
    // The lock rules are as before: kept while the change may still be under way in the Pod.
    assert.equal(keeps, inFlight ? 3 : 0, `inFlight ${inFlight}`);
  }
  assert.match(
    lostMessage('delete-many', '0123456789abcdef'),
    /^the file operation 0123456789abcdef ended without a result, so its outcome is unknown: the next change of this world settles it first, all of it or none of it; check the files before running it again$/,
  );
  // A single delete (a folder removed in place without the trash) may be half made too; a mkdir is one step.
  const one = new FilesEditor(CFG, fakes().runner, undefined, undefined, lost(false));
  assert.ok((await held(() => one.delete(T, 'd')).catch((e: unknown) => e)) instanceof OutcomeUnknownError);
  const mkdir = await held(() => one.mkdir(T, 'd')).catch((e: unknown) => e);
  assert.ok(mkdir instanceof JobLostError && !(mkdir instanceof OutcomeUnknownError), String(mkdir));
  assert.match((mkdir as JobLostError).callerMessage, /either not made or fully made/);

  // A one-shot Job lost the same way: the op id is the Job's own (its op-id label).
  const jobs: V1Job[] = [];
  const runner = {
    async findJobs() {
      return [];
    },
    async run(job: V1Job) {
      jobs.push(job);
      throw new JobLostError(`file job ${job.metadata!.name} produced no result`, true);
    },
  } as unknown as SyncRunner;
  const shot = new FilesEditor(CFG, runner);
  const err = await shot.batch(T, 'move-many', { moves: [{ from: 'a', to: 'b' }] }).catch((e: unknown) => e);
  const label = jobs[0]!.metadata!.labels!['felis.lolicon.best/files-op']!;
  assert.match(label, /^[0-9a-f]{16}$/);
  assert.deepEqual(mapDomainError(err), { status: 503, code: 'outcome_unknown', message: lostMessage('move-many', label), op: label });
  // A read lost the same way is still a plain retry.
  const read = await shot.read(T, 'a').catch((e: unknown) => e);
  assert.ok(read instanceof JobLostError && !(read instanceof OutcomeUnknownError), String(read));
});

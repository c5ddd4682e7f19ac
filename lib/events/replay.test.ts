import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { configFromEnv } from '../config.ts';
import { FilesEditor } from '../files/editor.ts';
import { mapDomainError } from '../http/error-map.ts';
import type { JobPodApi, LogOpening } from '../kube/job-pods.ts';
import { FILES_CONTAINER, LABEL_EVENT, LABEL_EVENT_REQUEST, LABEL_FILES_MODE, LABEL_FILES_OP, LABEL_SERVER } from '../labels.ts';
import { RESULT_PREFIX } from '../protocol/result.ts';
import { SyncRunner } from '../runner/sync-runner.ts';
import { EventAnswerGoneError, EventConflictError } from './errors.ts';
import { eventKey, withEvent } from './scope.ts';

const SHA = 'a'.repeat(64);
const TARGET = { server: 'survival', world: { claim: 'world-survival-0' } };

/** A namespace of file Jobs: created ones finish at once with a result line in their Pod's log. */
class Jobs implements JobPodApi {
  jobs: V1Job[] = [];
  created: V1Job[] = [];
  /** Pods of finished Jobs are gone (TTL'd or deleted) when false. */
  podsKept = true;
  result = `${RESULT_PREFIX}{"sha256":"${SHA}"}\n`;
  async createJob(_ns: string, job: V1Job) {
    this.created.push(job);
    this.jobs.push({ ...job, status: { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] } });
  }
  #match(selector: string) {
    const want = selector.split(',').map((kv) => kv.split('='));
    return this.jobs.filter((j) => want.every(([k, v]) => j.metadata?.labels?.[k!] === v));
  }
  async listJobs(_ns: string, selector: string) {
    return this.#match(selector);
  }
  async listPods(_ns: string, selector: string): Promise<V1Pod[]> {
    if (!this.podsKept) return [];
    return this.#match(selector).map((j) => ({
      metadata: { name: `${j.metadata!.name}-pod`, creationTimestamp: new Date() },
      spec: { containers: [], nodeName: 'n' },
      status: { phase: 'Succeeded', containerStatuses: [{ name: FILES_CONTAINER, image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0 } } }] },
    }));
  }
  async openLog(): Promise<LogOpening> {
    const body = Readable.from([Buffer.from(this.result)]);
    return { kind: 'stream', body, close: () => body.destroy() };
  }
}

function editor(api: Jobs) {
  const cfg = { ...configFromEnv({ FELIS_IMAGE: 'felis/files:test' }).editor!, timeoutMs: 3000 };
  return new FilesEditor(cfg, new SyncRunner(api, { finishGraceMs: 50 }));
}
const write = (e: FilesEditor) => e.write(TARGET, 'a.txt', Buffer.from('hi'), { sha256: SHA });

test('a file Job made for an event carries the event key as a label; one made for plain HTTP carries none', async () => {
  const api = new Jobs();
  const key = eventKey('/src', 'id-1');
  await withEvent(key, () => write(editor(api)));
  await write(editor(api));
  assert.equal(api.created.length, 2);
  assert.equal(api.created[0]!.metadata!.labels![LABEL_EVENT], key);
  assert.equal(api.created[0]!.spec!.template.metadata!.labels![LABEL_EVENT], key);
  assert.equal(api.created[1]!.metadata!.labels![LABEL_EVENT], undefined);
});

test('a redelivered event follows the Job of the first delivery and answers from its result, creating nothing', async () => {
  const api = new Jobs();
  const key = eventKey('/src', 'id-2');
  const e = editor(api);
  const first = await withEvent(key, () => write(e));
  // What the Job printed is the answer, so the second delivery must read it, not compute one.
  const again = await withEvent(key, () => write(e));
  assert.equal(again, first);
  assert.equal(api.created.length, 1);
});

test('a redelivered event whose Job has finished and lost its Pod is refused 410 and not run again', async () => {
  const api = new Jobs();
  const key = eventKey('/src', 'id-3');
  const e = editor(api);
  await withEvent(key, () => write(e));
  api.podsKept = false;
  await assert.rejects(
    withEvent(key, () => write(e)),
    (err: unknown) => err instanceof EventAnswerGoneError && mapDomainError(err)?.status === 410 && err.code === 'event_answer_gone',
  );
  assert.equal(api.created.length, 1);
});

test('an event id reused for another op or server is refused 409 event_conflict and runs nothing', async () => {
  const api = new Jobs();
  const key = eventKey('/src', 'id-4');
  const e = editor(api);
  await withEvent(key, () => write(e));
  assert.equal(api.created[0]!.metadata!.labels![LABEL_FILES_MODE], 'write');
  await assert.rejects(
    withEvent(key, () => e.delete(TARGET, 'a.txt')),
    (err: unknown) => err instanceof EventConflictError && mapDomainError(err)?.status === 409 && err.code === 'event_conflict',
  );
  await assert.rejects(
    withEvent(key, () => e.write({ ...TARGET, server: 'creative' }, 'a.txt', Buffer.from('hi'), { sha256: SHA })),
    (err: unknown) => err instanceof EventConflictError,
  );
  assert.equal(api.created.length, 1);
  assert.equal(api.created[0]!.metadata!.labels![LABEL_SERVER], 'survival');
  assert.ok(api.created[0]!.metadata!.labels![LABEL_FILES_OP]);
});

test('an event id reused for the same op on the same server but another request is refused 409 event_conflict, and the second request does not run', async () => {
  const api = new Jobs();
  const key = eventKey('/src', 'id-5');
  const e = editor(api);
  await withEvent({ key, request: 'a'.repeat(48) }, () => write(e));
  assert.equal(api.created[0]!.metadata!.labels![LABEL_EVENT_REQUEST], 'a'.repeat(48));
  // The same request again is a redelivery: answered from the first Job.
  assert.equal(await withEvent({ key, request: 'a'.repeat(48) }, () => write(e)), SHA);
  await assert.rejects(
    withEvent({ key, request: 'b'.repeat(48) }, () => e.write(TARGET, 'other.txt', Buffer.from('hi'), { sha256: SHA })),
    (err: unknown) => err instanceof EventConflictError && mapDomainError(err)?.status === 409 && err.code === 'event_conflict',
  );
  assert.equal(api.created.length, 1);
});

test('the event key is a label value and differs when either the source or the id does', () => {
  const k = eventKey('https://10.96.0.1:443', 'f47ac10b-58cc-4372-a567-0e02b2c3d479');
  assert.match(k, /^[0-9a-f]{48}$/);
  assert.notEqual(eventKey('/a', 'b'), eventKey('/b', 'b'));
  assert.notEqual(eventKey('/a', 'b'), eventKey('/a', 'c'));
  // The separator keeps ("/a", "bc") and ("/ab", "c") apart.
  assert.notEqual(eventKey('/a', 'bc'), eventKey('/ab', 'c'));
});

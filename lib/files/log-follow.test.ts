import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { FILES_CONTAINER, LABEL_FILES_FOLLOW, LABEL_FILES_OP } from '../labels.ts';
import { FileEditError } from './errors.ts';
import { checkFollowKept, checkFollowRoom, FollowLimitError, openFollow } from './log-follow.ts';

const running = (ip: string): V1Pod => ({ status: { phase: 'Running', podIP: ip, containerStatuses: [{ name: FILES_CONTAINER, state: { running: {} } } as never] } });

/** A stand-in for the follow Pod's program: what it was asked, and its answer. */
async function podServer(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const asked: http.IncomingHttpHeaders[] = [];
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    asked.push(req.headers);
    paths.push(req.url ?? '');
    answer(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, asked, paths, port: (server.address() as AddressInfo).port };
}

test("a served follow is the Pod's answer, asked with the Job's token at /follow; the run (the log read) is stopped then", async () => {
  const pod = await podServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.write('{"id":"1:2","line":"a"}\n');
  });
  const selectors: string[] = [];
  let runSignal: AbortSignal | undefined;
  try {
    const res = await openFollow({
      pods: { listPods: async (_ns, sel) => (selectors.push(sel), [running('127.0.0.1')]) },
      namespace: 'ns',
      job: 'files-survival-00aa',
      opId: '00aa',
      token: 'tok',
      port: pod.port,
      run: (s) => ((runSignal = s), new Promise<string>(() => {})),
      timeoutMs: 5_000,
      signal: new AbortController().signal,
    });
    assert.equal(res.statusCode, 200);
    res.destroy();
    assert.deepEqual(selectors, [`${LABEL_FILES_OP}=00aa`]);
    assert.equal(pod.asked[0]!.authorization, 'Bearer tok');
    assert.deepEqual(pod.paths, ['/follow']);
    assert.equal(runSignal?.aborted, true, 'nobody waits for the result line of a served follow');
  } finally {
    pod.server.closeAllConnections();
    pod.server.close();
  }
});

test("a Job that refuses before serving (its result line read by the run) is the tail's own error; so is one whose Pod ended first", async () => {
  const refusal = JSON.stringify({ code: 'not_found', error: 'logs/nope.log does not exist' });
  const base = { namespace: 'ns', job: 'j', opId: '00bb', token: 't', port: 1, timeoutMs: 5_000, signal: new AbortController().signal };
  await assert.rejects(
    openFollow({ ...base, pods: { listPods: async () => [] }, run: async () => refusal }),
    (e: unknown) => e instanceof FileEditError && e.code === 'not_found' && /nope\.log does not exist/.test(e.message),
  );
  const ended: V1Pod = { metadata: { name: 'p' }, status: { phase: 'Succeeded' } };
  await assert.rejects(
    openFollow({ ...base, pods: { listPods: async () => [ended] }, run: () => new Promise((ok) => setTimeout(() => ok(refusal), 50)) }),
    (e: unknown) => e instanceof FileEditError && e.code === 'not_found',
  );
  // A success without serving (it cannot be a tail the caller asked for) is ours: not a refusal.
  const report = JSON.stringify({ report: { path: 'a', lines: [], truncated: false, size: 0 } });
  await assert.rejects(openFollow({ ...base, pods: { listPods: async () => [] }, run: async () => report }), /ended before serving/);
});

test('the limit counts unfinished follow Jobs only', () => {
  const job = (finished: boolean, follow = true): V1Job => ({
    metadata: { labels: follow ? { [LABEL_FILES_FOLLOW]: 'true' } : {} },
    status: finished ? { conditions: [{ type: 'Complete', status: 'True' }] } : {},
  });
  checkFollowRoom([job(false), job(true), job(true)]);
  checkFollowRoom([job(false), job(false, false)]);
  assert.throws(() => checkFollowRoom([job(false), job(false), job(true)]), FollowLimitError);
  assert.throws(() => checkFollowRoom([job(false), job(false), job(false)]), /3 log follows of this server are running/);
});

test('of follows that passed the count together, the oldest two stay (creation time, then name) and the newer give way; finished ones do not count', () => {
  const job = (name: string, at: string, finished = false): V1Job => ({
    metadata: { name, creationTimestamp: new Date(at), labels: { [LABEL_FILES_FOLLOW]: 'true' } },
    status: finished ? { conditions: [{ type: 'Complete', status: 'True' }] } : {},
  });
  const jobs = [job('c', '2026-12-07T22:00:02Z'), job('b', '2026-12-07T22:00:01Z'), job('a', '2026-12-07T22:00:01Z'), job('old', '2026-12-07T21:00:00Z', true)];
  checkFollowKept(jobs, 'a');
  checkFollowKept(jobs, 'b');
  assert.throws(() => checkFollowKept(jobs, 'c'), FollowLimitError);
  // Alone with the finished one: kept.
  checkFollowKept([jobs[0]!, jobs[3]!], 'c');
});

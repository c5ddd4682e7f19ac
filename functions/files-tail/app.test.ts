import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { withEvent } from '../../lib/events/scope.ts';
import { FileEditError } from '../../lib/files/errors.ts';
import { FOLLOW_RETRY_AFTER_SECONDS, FollowLimitError, FollowUnavailableError } from '../../lib/files/log-follow.ts';
import { NotStoppedError } from '../../lib/maintenance/errors.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { envelopeOf, FakeGates, fakeEditor, RUNNING_SERVER, realGates, routeKit } from '../../lib/testing/route-kit.ts';
import { filesTail } from './app.ts';

const report = { path: 'logs/latest.log', lines: ['[12:00:00] Done', '[12:00:01] Saved'], truncated: false, size: 32 };

function kit(answer: Result = { report }) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, { run: () => answer });
  return { ...routeKit(filesTail, { gates, editor: ed.editor }), calls: ed.calls };
}

test('a tail takes no lock, runs the tail op with lines unset by default, answers the report, and is not audited', async () => {
  const k = kit();
  const r = await k.call('GET', '/api/v1/servers/survival/files/tail?path=logs%2Flatest.log');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { ...report, world_state: 'stopped' });
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'tail', path: 'logs/latest.log' } }]);
  assert.equal(k.gates.ran.length, 0, 'no lock');
  assert.deepEqual(k.calls[0]!.args.slice(1, 4), ['tail', 'logs/latest.log', {}]);
  assert.equal(k.audits().length, 0);
});

test('lines reaches the Job as a number; out of 1..5000 it is 400 before any Job; a path is required', async () => {
  const k = kit();
  assert.equal((await k.call('GET', '/api/v1/servers/survival/files/tail?path=a.log&lines=5000')).status, 200);
  assert.deepEqual(k.calls[0]!.args[3], { lines: 5000 });
  for (const bad of ['lines=0', 'lines=5001', 'lines=1.5', 'lines=-1', 'lines=ten', 'lines=']) {
    const b = await k.call('GET', `/api/v1/servers/survival/files/tail?path=a.log&${bad}`);
    assert.equal(b.status, 400, `${bad}: ${b.text}`);
    assert.match(envelopeOf(b).message, /\?lines= query parameter must be a whole number from 1 to 5000/);
  }
  const none = await k.call('GET', '/api/v1/servers/survival/files/tail');
  assert.equal(none.status, 400);
  assert.equal(k.calls.length, 1);
});

test("a running server's log is tailed, world_state running; refusals are their envelopes", async () => {
  const k = kit();
  k.deps.gates = realGates(RUNNING_SERVER).gates;
  const r = await k.call('GET', '/api/v1/servers/survival/files/tail?path=logs%2Flatest.log');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.world_state, 'running');
  const missing = kit({ code: 'not_found', error: 'nope.log does not exist' });
  assert.equal(envelopeOf(await missing.call('GET', '/api/v1/servers/survival/files/tail?path=nope.log')).code, 'not_found');
  const hidden = kit({ code: 'bad_path', error: 'config/paper-global.yml is not readable' });
  assert.equal((await hidden.call('GET', '/api/v1/servers/survival/files/tail?path=config%2Fpaper-global.yml')).status, 400);
  const broken = kit({ report: { ...report, lines: [1] } });
  assert.equal((await broken.call('GET', '/api/v1/servers/survival/files/tail?path=a.log')).status, 500, 'a report of another shape is ours');
  const off = kit();
  off.gates.enterError = new NotStoppedError();
  assert.equal((await off.call('GET', '/api/v1/servers/survival/files/tail?path=a.log')).status, 409);
});

/** A follow Job's answer: its NDJSON lines. */
function jobAnswer(lines: object[]) {
  return Readable.from([lines.map((l) => `${JSON.stringify(l)}\n`).join('')]);
}

function followKit(answer: () => unknown) {
  const gates = new FakeGates();
  const ed = fakeEditor(gates, { follow: answer });
  return { ...routeKit(filesTail, { gates, editor: ed.editor }), calls: ed.calls };
}

test('follow=true answers Server-Sent Events: each line an event with its id and one data line, a CR shown, the end event last; no lock, no audit', async () => {
  const k = followKit(() => ({
    job: 'files-survival-0123456789abcdef',
    response: jobAnswer([{ id: '7:10', line: '[12:00:00] Done' }, { id: '7:22', line: 'a\rb' }, { id: '7:23', line: '' }, { end: 'lifetime' }]),
  }));
  const r = await k.call('GET', '/api/v1/servers/survival/files/tail?path=logs%2Flatest.log&follow=true&lines=2');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  assert.equal(r.headers.get('cache-control'), 'no-store');
  assert.equal(r.headers.get('x-felis-world-state'), 'stopped');
  assert.equal(r.text, 'id: 7:10\ndata: [12:00:00] Done\n\nid: 7:22\ndata: a\u240db\n\nid: 7:23\ndata: \n\nevent: end\ndata: {"reason":"lifetime"}\n\n');
  assert.equal(k.calls[0]!.method, 'follow');
  assert.deepEqual(k.calls[0]!.args.slice(1, 3), ['logs/latest.log', { lines: 2 }]);
  assert.deepEqual(k.gates.entered, [{ server: 'survival', access: { op: 'tail', path: 'logs/latest.log' } }]);
  assert.equal(k.gates.ran.length, 0, 'no lock');
  assert.equal(k.audits().length, 0);
});

test("a follow whose Job's stream ends without its end line says so: event end, reason ended", async () => {
  const k = followKit(() => ({ job: 'j', response: jobAnswer([{ id: '7:3', line: 'ab' }]) }));
  const r = await k.call('GET', '/api/v1/servers/survival/files/tail?path=a.log&follow=true');
  assert.equal(r.text, 'id: 7:3\ndata: ab\n\nevent: end\ndata: {"reason":"ended"}\n\n');
  assert.deepEqual(k.calls[0]!.args[2], {}, 'lines unset: the Job takes the default');
});

test('Last-Event-ID resumes after that event (no tail: lines is not passed); ?from= wins over it; a bad one is 400 before any Job', async () => {
  const k = followKit(() => ({ job: 'j', response: jobAnswer([{ end: 'lifetime' }]) }));
  const base = '/api/v1/servers/survival/files/tail?path=a.log&follow=true&lines=50';
  assert.equal((await k.call('GET', base, undefined, { 'last-event-id': '123:456' })).status, 200);
  assert.deepEqual(k.calls[0]!.args[2], { from: '123:456' });
  assert.equal((await k.call('GET', `${base}&from=9:1`, undefined, { 'last-event-id': '123:456' })).status, 200);
  assert.deepEqual(k.calls[1]!.args[2], { from: '9:1' });
  const badHeader = await k.call('GET', base, undefined, { 'last-event-id': 'x; rm -rf' });
  assert.equal(badHeader.status, 400);
  assert.match(envelopeOf(badHeader).message, /Last-Event-ID header must be an event id/);
  for (const bad of ['from=abc', 'from=1:2:3', 'from=', 'from=-1', 'from=12']) {
    const b = await k.call('GET', `${base}&${bad}`);
    assert.equal(b.status, 400, `${bad}: ${b.text}`);
    assert.match(envelopeOf(b).message, /\?from= query parameter must be an event id/);
  }
  assert.equal(k.calls.length, 2);
});

test('follow takes true or false only (400 otherwise); false is a plain tail', async () => {
  const k = kit();
  for (const bad of ['follow=yes', 'follow=1', 'follow=', 'follow=TRUE']) {
    const b = await k.call('GET', `/api/v1/servers/survival/files/tail?path=a.log&${bad}`);
    assert.equal(b.status, 400, `${bad}: ${b.text}`);
    assert.match(envelopeOf(b).message, /\?follow= query parameter must be true or false/);
  }
  const plain = await k.call('GET', '/api/v1/servers/survival/files/tail?path=a.log&follow=false');
  assert.equal(plain.status, 200);
  assert.deepEqual(plain.body, { ...report, world_state: 'stopped' });
  assert.deepEqual(
    k.calls.map((c) => c.method),
    ['run'],
  );
});

test("the third follow of a server is 429 follow_limit with Retry-After; a refusal of the Job is the tail's envelope; no job key is 503", async () => {
  const busy = followKit(() => {
    throw new FollowLimitError(2);
  });
  const r = await busy.call('GET', '/api/v1/servers/survival/files/tail?path=logs%2Flatest.log&follow=true');
  assert.equal(r.status, 429, r.text);
  assert.equal(envelopeOf(r).code, 'follow_limit');
  assert.equal(r.headers.get('retry-after'), String(FOLLOW_RETRY_AFTER_SECONDS));
  const missing = followKit(() => {
    throw new FileEditError('not_found', 'nope.log does not exist');
  });
  const m = await missing.call('GET', '/api/v1/servers/survival/files/tail?path=nope.log&follow=true');
  assert.equal(m.status, 404);
  assert.equal(envelopeOf(m).message, 'nope.log does not exist');
  const keyless = followKit(() => {
    throw new FollowUnavailableError();
  });
  const u = await keyless.call('GET', '/api/v1/servers/survival/files/tail?path=a.log&follow=true');
  assert.equal(u.status, 503);
  assert.equal(envelopeOf(u).code, 'follow_unavailable');
});

test("a running server's log is followed too, and the stream says so", async () => {
  const k = followKit(() => ({ job: 'j', response: jobAnswer([{ end: 'lifetime' }]) }));
  k.deps.gates = realGates(RUNNING_SERVER).gates;
  const r = await k.call('GET', '/api/v1/servers/survival/files/tail?path=logs%2Flatest.log&follow=true');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-felis-world-state'), 'running');
});

test('a CloudEvent cannot follow (its answer is one reply): 400 event_data_invalid before any Job', async () => {
  const k = followKit(() => ({ job: 'j', response: jobAnswer([{ end: 'lifetime' }]) }));
  const r = await withEvent('ev-1', () => k.call('GET', '/api/v1/servers/survival/files/tail?path=a.log&follow=true'));
  assert.equal(r.status, 400, r.text);
  assert.equal(envelopeOf(r).code, 'event_data_invalid');
  assert.equal(k.calls.length, 0);
});

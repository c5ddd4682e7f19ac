import assert from 'node:assert/strict';
import { test } from 'node:test';
import { endEvent, followEvents, followStream, KEEPALIVE, lineEvent } from './follow-events.ts';

/** A source whose chunks the test pushes, and that records being closed. */
function source() {
  const queue: Array<string | Uint8Array> = [];
  let wake: (() => void) | undefined;
  let ended = false;
  const state = { closed: false };
  let reading: Promise<unknown> = Promise.resolve();
  const it: AsyncIterator<string | Uint8Array> = {
    next() {
      const r = (async () => {
        while (queue.length === 0 && !ended && !state.closed) await new Promise<void>((ok) => (wake = ok));
        if (queue.length > 0) return { done: false, value: queue.shift()! };
        return { done: true, value: undefined } as const;
      })();
      reading = r;
      return r;
    },
    // As an async generator's (a Node stream's iterator): it waits for the read under way.
    async return() {
      await reading;
      return { done: true, value: undefined };
    },
  };
  return {
    iterable: { [Symbol.asyncIterator]: () => it },
    push(c: string | Uint8Array) {
      queue.push(c);
      wake?.();
    },
    end() {
      ended = true;
      wake?.();
    },
    /** What the relay's `close` does: the source ends at once (a destroyed stream). */
    close() {
      state.closed = true;
      wake?.();
    },
    state,
  };
}

const never = new AbortController().signal;

test('lines split across chunks (a character split too) come out whole, one event each; unknown objects are skipped; the end line ends it and closes the source', async () => {
  const s = source();
  const out = followEvents(s.iterable, { keepaliveMs: 60_000, stop: never, close: s.close });
  const bytes = Buffer.from('{"id":"1:6","line":"héllo"}\n{"other":1}\n{"id":"1:9","line":"x"}\n{"end":"lifetime"}\n');
  const cut = bytes.indexOf(Buffer.from('é')) + 1; // inside the two bytes of é
  s.push(bytes.subarray(0, cut));
  s.push(bytes.subarray(cut));
  const got: string[] = [];
  for await (const f of out) got.push(f);
  assert.deepEqual(got, [lineEvent('1:6', 'héllo'), lineEvent('1:9', 'x'), endEvent('lifetime')]);
  assert.equal(s.state.closed, true);
});

test('a quiet stream gets a keepalive comment; a stop ends it with shutdown and closes the source', { timeout: 10_000 }, async () => {
  const s = source();
  const stop = new AbortController();
  const out = followEvents(s.iterable, { keepaliveMs: 20, stop: stop.signal, close: s.close });
  assert.equal((await out.next()).value, KEEPALIVE);
  s.push('{"id":"2:1","line":"a"}\n');
  let f = await out.next();
  while (f.value === KEEPALIVE) f = await out.next();
  assert.equal(f.value, lineEvent('2:1', 'a'));
  stop.abort();
  for (f = await out.next(); f.value === KEEPALIVE; f = await out.next());
  assert.equal(f.value, endEvent('shutdown'));
  assert.equal((await out.next()).done, true);
  assert.equal(s.state.closed, true);
});

test('a stream that breaks, is not JSON, or holds a line past the bound ends with reason ended', async () => {
  const broken: AsyncIterable<string> = {
    [Symbol.asyncIterator]: () => ({ next: async () => Promise.reject(new Error('socket hang up')) }),
  };
  const a: string[] = [];
  for await (const f of followEvents(broken, { keepaliveMs: 60_000, stop: never, close: () => {} })) a.push(f);
  assert.deepEqual(a, [endEvent('ended')]);
  const s = source();
  s.push('not json\n');
  const b: string[] = [];
  for await (const f of followEvents(s.iterable, { keepaliveMs: 60_000, stop: never, close: s.close })) b.push(f);
  assert.deepEqual(b, [endEvent('ended')]);
  const big = source();
  big.push(`{"id":"1:1","line":"${'x'.repeat(1 << 20)}`);
  const c: string[] = [];
  for await (const f of followEvents(big.iterable, { keepaliveMs: 60_000, stop: never, close: big.close })) c.push(f);
  assert.deepEqual(c, [endEvent('ended')]);
  assert.equal(big.state.closed, true);
});

test('an id of another shape is not relayed (it would go into the id: field as sent)', async () => {
  const s = source();
  s.push('{"id":"1:1\\nevent: x","line":"a"}\n{"end":"lifetime"}\n');
  const got: string[] = [];
  for await (const f of followEvents(s.iterable, { keepaliveMs: 60_000, stop: never, close: s.close })) got.push(f);
  assert.deepEqual(got, [endEvent('lifetime')]);
});

test('the caller cancelling the byte stream calls onCancel, then closes the source', async () => {
  const s = source();
  let cancelled = 0;
  const stream = followStream(followEvents(s.iterable, { keepaliveMs: 60_000, stop: never, close: s.close }), () => {
    cancelled++;
    s.end(); // as the hang-up ends the Job's answer
  });
  const reader = stream.getReader();
  s.push('{"id":"3:1","line":"a"}\n');
  assert.equal(new TextDecoder().decode((await reader.read()).value), lineEvent('3:1', 'a'));
  await reader.cancel();
  assert.equal(cancelled, 1);
  assert.equal(s.state.closed, true);
});

test('the relay ends the stream itself with lifetime when its time is up, whatever the Job says, and closes the source', { timeout: 10_000 }, async () => {
  const s = source();
  const got: string[] = [];
  for await (const f of followEvents(s.iterable, { keepaliveMs: 60_000, stop: never, close: s.close, lifetimeMs: 30 })) got.push(f);
  assert.deepEqual(got, [endEvent('lifetime')]);
  assert.equal(s.state.closed, true);
});

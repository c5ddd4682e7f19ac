import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EventRejected, parseEvent, parseRequestData } from './parse.ts';

const binary = (extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  'ce-specversion': '1.0',
  'ce-id': 'e-1',
  'ce-source': '/apis/v1/namespaces/minecraft/pingsources/p',
  'ce-type': 'dev.felis.files.write',
  ...extra,
});
const structured = { 'content-type': 'application/cloudevents+json; charset=utf-8' };
const rejected = (code: string) => (err: unknown) => err instanceof EventRejected && err.code === code;

test('a binary-mode event gives its attributes from ce- headers and its JSON data from the body', () => {
  const ev = parseEvent(binary({ 'ce-subject': 'survival' }), '{"server":"survival","path":"a.txt"}');
  assert.deepEqual(ev, { id: 'e-1', source: '/apis/v1/namespaces/minecraft/pingsources/p', type: 'dev.felis.files.write', subject: 'survival', data: { server: 'survival', path: 'a.txt' } });
});

test('a structured-mode event gives the same result from one JSON document', () => {
  const body = JSON.stringify({ specversion: '1.0', id: 'e-1', source: '/apis/v1/namespaces/minecraft/pingsources/p', type: 'dev.felis.files.write', data: { server: 'survival' } });
  assert.deepEqual(parseEvent(structured, body), { id: 'e-1', source: '/apis/v1/namespaces/minecraft/pingsources/p', type: 'dev.felis.files.write', data: { server: 'survival' } });
});

test('a structured event without an id is refused: one made up here would make every redelivery new', () => {
  const body = JSON.stringify({ specversion: '1.0', source: '/s', type: 't' });
  assert.throws(() => parseEvent(structured, body), rejected('event_invalid'));
  assert.throws(() => parseEvent(structured, JSON.stringify({ specversion: '1.0', id: '', source: '/s', type: 't' })), rejected('event_invalid'));
});

test('no event at all, a batch, malformed JSON, a missing source or a bad spec version are each refused by name', () => {
  assert.throws(() => parseEvent({ 'content-type': 'application/json' }, '{}'), rejected('event_missing'));
  assert.throws(() => parseEvent({ 'content-type': 'application/cloudevents-batch+json' }, '[]'), rejected('event_batch'));
  assert.throws(() => parseEvent(structured, '{nope'), rejected('event_malformed'));
  assert.throws(() => parseEvent(structured, '[1]'), rejected('event_malformed'));
  const noSource = binary();
  delete (noSource as Record<string, string>)['ce-source'];
  assert.throws(() => parseEvent(noSource, '{}'), rejected('event_invalid'));
  assert.throws(() => parseEvent(binary({ 'ce-specversion': '9.9' }), '{}'), rejected('event_invalid'));
});

test('event data that is not JSON is refused', () => {
  assert.throws(() => parseEvent(binary({ 'content-type': 'text/plain' }), 'server=survival'), rejected('event_data_type'));
});

test('request data is the route parts and query parameters (texts or numbers): other shapes and wrong types are refused with where', () => {
  assert.deepEqual(parseRequestData({ server: 's', path: 'p', body: { to: 'x' } }), { server: 's', path: 'p', body: { to: 'x' } });
  assert.deepEqual(parseRequestData(undefined), {});
  assert.throws(
    // Whether a route takes a parameter is the route's to judge (lib/http/event-entry.ts); a value no query can carry is refused here.
    () => parseRequestData({ server: 's', extra: { a: 1 } }),
    (e: unknown) => e instanceof EventRejected && e.code === 'event_data_invalid',
  );
  assert.throws(
    () => parseRequestData({ server: 7 }),
    (e: unknown) => e instanceof EventRejected && /server/.test(e.message),
  );
  assert.throws(() => parseRequestData('text'), rejected('event_data_invalid'));
});

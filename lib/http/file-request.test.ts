import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Hono } from 'hono';
import * as z from '../schema.ts';
import { ApiError } from './envelope.ts';
import { jsonBody, queryPath, rawQueryParam, strictDecode } from './file-request.ts';

test('strict decoding keeps well-formed UTF-8 and refuses broken escapes, overlong forms and non-UTF-8 bytes', () => {
  assert.equal(strictDecode('config%2Fpaper.yml'), 'config/paper.yml');
  assert.equal(strictDecode('caf%C3%A9+menu'), 'café menu');
  assert.equal(strictDecode('%E0%A4%A8'), 'न');
  assert.equal(strictDecode('%F0%9F%98%80'), '😀');
  assert.equal(strictDecode('plain'), 'plain');
  assert.equal(strictDecode('%25'), '%');
  for (const bad of ['%FF', '%E0%A4%A', '%C0%AF', '%%', '%', 'a%2', '%zz', '%ED%A0%80', '%F8%88%80%80%80', '%80']) {
    assert.equal(strictDecode(bad), undefined, bad);
  }
});

test('the first path parameter is found by its decoded key; a broken value is a bad_request ApiError', () => {
  assert.equal(rawQueryParam('http://x/f?a=1&path=a%2Fb&path=c', 'path'), 'a/b');
  assert.equal(rawQueryParam('http://x/f?pa%74h=z', 'path'), 'z');
  assert.equal(rawQueryParam('http://x/f?path', 'path'), '');
  assert.equal(rawQueryParam('http://x/f', 'path'), undefined);
  assert.equal(rawQueryParam('http://x/f?path=a#frag', 'path'), 'a');
  assert.throws(
    () => rawQueryParam('http://x/f?path=%FF', 'path'),
    (e: unknown) => e instanceof ApiError && e.status === 400 && e.code === 'bad_request',
  );
});

test('a route reading ?path= answers 400 bad_request for malformed percent-encoding, and the name otherwise', async () => {
  const app = new Hono();
  app.get('/p', (c) => c.text(queryPath(c, true)));
  app.onError((err, c) => (err instanceof ApiError ? c.json({ code: err.code }, err.status) : c.text('boom', 500)));
  for (const bad of ['%FF', '%E0%A4%A', '%C0%AF', '%%']) {
    const r = await app.request(`/p?path=${bad}`);
    assert.equal(r.status, 400, bad);
    assert.deepEqual(await r.json(), { code: 'bad_request' });
  }
  const ok = await app.request('/p?path=world%2Fcaf%C3%A9.txt');
  assert.equal(await ok.text(), 'world/café.txt');
  assert.equal((await app.request('/p?path=')).status, 400);
});

test('an absent JSON body is {} when every field of the schema is optional, and required otherwise', async () => {
  const app = new Hono();
  const optional = z.strictObject({ to: z.optional(z.string()) });
  const required = z.strictObject({ to: z.string() });
  app.post('/opt', async (c) => c.json(await jsonBody(c, optional)));
  app.post('/req', async (c) => c.json(await jsonBody(c, required)));
  app.onError((err, c) => (err instanceof ApiError ? c.json({ code: err.code, message: err.message }, err.status) : c.text('boom', 500)));
  assert.deepEqual(await (await app.request('/opt', { method: 'POST' })).json(), {});
  assert.deepEqual(await (await app.request('/opt', { method: 'POST', body: '  \n' })).json(), {});
  assert.deepEqual(await (await app.request('/opt', { method: 'POST', body: '{"to":"b"}' })).json(), { to: 'b' });
  const r = await app.request('/req', { method: 'POST' });
  assert.equal(r.status, 400);
  assert.deepEqual(await r.json(), { code: 'bad_request', message: 'a JSON body is required' });
});

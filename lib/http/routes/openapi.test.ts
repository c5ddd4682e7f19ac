import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { $ZodType } from 'zod/v4/core';
import * as z from '../../schema.ts';
import { wholeNumberText } from './common-schemas.ts';
import { buildDocument, ERROR_ENVELOPE, errorsByStatus, jsonSchema, openapiPath } from './openapi.ts';
import { SCHEMAS } from './schemas.ts';
import { ROUTE_PROSE, ROUTES } from './table.ts';
import type { RouteEntry, RouteSchemas, RouteTable } from './types.ts';

type Json = Record<string, any>;
const doc = buildDocument({ routes: ROUTES, schemas: SCHEMAS, prose: ROUTE_PROSE }, '0.0.0') as Json;

/** An answer, its `$ref` into `components.responses` followed. */
function resolved(d: Json, r: Json): Json {
  if (typeof r.$ref !== 'string') return r;
  const name = r.$ref.replace('#/components/responses/', '');
  assert.ok(d.components.responses[name], `${r.$ref} points at nothing`);
  return d.components.responses[name];
}

/** The codes an error answer allows: the shared envelope narrowed by an enum. */
function codesOf(d: Json, r: Json): string[] {
  const { allOf } = resolved(d, r).content['application/json'].schema;
  assert.equal(allOf[0].$ref, ERROR_ENVELOPE);
  return allOf[1].properties.error.properties.code.enum;
}

test('every route still says which codes it answers with which status, exactly as the table does, each one the shared envelope', () => {
  assert.ok(doc.components.schemas.ErrorEnvelope.properties.error, 'the envelope is a component');
  for (const [id, e] of Object.entries(ROUTES)) {
    const responses = doc.paths[openapiPath(e.path)][e.method.toLowerCase()].responses as Json;
    const errors = Object.fromEntries(Object.entries(responses).filter(([s]) => Number(s) >= 400));
    const want = Object.fromEntries([...errorsByStatus(e)].map(([s, codes]) => [String(s), codes]));
    assert.deepEqual(Object.keys(errors).sort(), Object.keys(want).sort(), id);
    for (const [status, r] of Object.entries(errors)) {
      assert.deepEqual(codesOf(doc, r), want[status], `${id} ${status}`);
      assert.equal(resolved(doc, r).description, want[status]!.join(', '), `${id} ${status}: the codes in words`);
    }
  }
});

test('an error answer two routes give alike is kept once, in components.responses, named by its codes', () => {
  const entry = (path: string): RouteEntry => ({ fn: 'f', method: 'GET', path, permission: { kind: 'server', subresource: 'state', verb: 'get' }, errors: [[409, 'too_poked']] });
  const routes = { a: entry('/a'), b: entry('/b'), c: { ...entry('/c'), errors: [[409, 'too_prodded'] as const] } } satisfies RouteTable;
  const responses = { 200: { description: 'ok', empty: true as const } };
  const prose = { summary: 's', answer: 'a' };
  const d = buildDocument({ routes, schemas: { a: { responses }, b: { responses }, c: { responses } }, prose: { a: prose, b: prose, c: prose } }, '0') as Json;
  assert.deepEqual(d.paths['/a'].get.responses['409'], { $ref: '#/components/responses/TooPoked' });
  assert.deepEqual(d.paths['/b'].get.responses['409'], { $ref: '#/components/responses/TooPoked' });
  // Only one route answers this one: it stays in place.
  assert.deepEqual(codesOf(d, d.paths['/c'].get.responses['409']), ['too_prodded']);
  assert.equal(d.paths['/c'].get.responses['409'].$ref, undefined);
  assert.deepEqual(codesOf(d, d.paths['/a'].get.responses['401']), ['unauthorized']);
  assert.equal(d.components.responses.TooProdded, undefined);
});

test('a query parameter that spells a whole number is an integer, with its bounds; none is left as a string of digits', () => {
  const numbers: string[] = [];
  for (const [id, s] of Object.entries(SCHEMAS as Record<string, RouteSchemas>)) {
    const e = ROUTES[id as keyof typeof ROUTES];
    const params = (doc.paths[openapiPath(e.path)][e.method.toLowerCase()].parameters ?? []) as Json[];
    for (const [name, schema] of Object.entries(s.query?._zod.def.shape ?? {}) as [string, $ZodType][]) {
      // A whole number to the route: digits taken, letters refused.
      if (!z.safeParse(schema, '1').success || z.safeParse(schema, 'a').success) continue;
      const p = params.find((p) => p.in === 'query' && p.name === name)!;
      assert.equal(p.schema.type, 'integer', `${id} ?${name}=`);
      assert.equal(typeof p.schema.minimum, 'number', `${id} ?${name}=`);
      assert.equal(typeof p.schema.maximum, 'number', `${id} ?${name}=`);
      numbers.push(`${id} ${name} ${p.schema.minimum}..${p.schema.maximum}`);
    }
  }
  // The ones there are today, so that the probe above is seen to find them.
  for (const want of [
    'files.list limit 1..5000',
    'files.search limit 1..1000',
    'files.trash.list limit 1..5000',
    'files.usage depth 1..3',
    'files.usage top 1..100',
    `uploads.part offset 0..${Number.MAX_SAFE_INTEGER}`,
  ]) {
    assert.ok(numbers.includes(want), `${want} in ${numbers.join(', ')}`);
  }
  const contentLength = Object.values(doc.paths)
    .flatMap((item) => Object.values(item as Json).flatMap((op: Json) => op.parameters ?? []))
    .filter((p: Json) => p.name === 'Content-Length');
  assert.ok(contentLength.length > 0);
  for (const p of contentLength) assert.deepEqual(p.schema, { type: 'integer', minimum: 0 });
});

test('wholeNumberText: text to zod, checked by its digits and its bounds; the integer it spells to the document', () => {
  const limit = z.optional(z.pipe(wholeNumberText(/^[0-9]{1,3}$/, 1, 100, 'no'), z.transform(Number)));
  assert.equal(z.parse(limit, '7'), 7);
  for (const bad of ['0', '101', '1e2', '-1', ' 7', 'x', '']) assert.equal(z.safeParse(limit, bad).error?.issues[0]?.message, 'no', bad);
  assert.deepEqual(jsonSchema(limit, 'input'), { type: 'integer', minimum: 1, maximum: 100 });
});

test('servers: the origin that served the document', () => {
  assert.deepEqual(
    doc.servers.map((s: Json) => s.url),
    ['/'],
  );
});

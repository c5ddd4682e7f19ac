import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FUNCTIONS } from '../../functions/index.ts';
import { CONTAINER_CALLS, CONTAINER_ORDER, RBAC_SCENARIOS } from './function-e2e.generated.test-kit.ts';
import { runOrder } from './function-e2e.ts';

test('runOrder keeps the folders’ order but for the places asked: after its dependencies, first, last', () => {
  const names = ['a', 'b', 'c', 'd', 'e'];
  assert.deepEqual(runOrder(names, {}), names);
  assert.deepEqual(runOrder(names, { a: { after: ['c'] }, b: { after: ['a'] } }), ['c', 'a', 'b', 'd', 'e']);
  assert.deepEqual(runOrder(names, { d: 'first', a: 'last', c: { after: ['d'] } }), ['d', 'b', 'c', 'e', 'a']);
  assert.deepEqual(runOrder(names, { b: 'last', a: 'last', e: 'first', c: 'first' }), ['c', 'e', 'd', 'a', 'b']);
});

test('runOrder refuses what it cannot place: a circle, an unknown name, a dependency that runs last', () => {
  assert.throws(() => runOrder(['a', 'b', 'c'], { a: { after: ['b'] }, b: { after: ['a'] } }), /a circle among a, b/);
  assert.throws(() => runOrder(['a', 'b'], { a: { after: ['x'] } }), /x, which is not one of the functions/);
  assert.throws(() => runOrder(['a', 'b'], { x: 'first' }), /a place for x/);
  assert.throws(() => runOrder(['a', 'b'], { a: { after: ['b'] }, b: 'last' }), /b, which runs last/);
});

// The tables the two e2e tests load (the container tier runs only where podman is), checked here too.
test('every function folder has its e2e scenarios, and the container calls run in an order their places allow', () => {
  const fns = Object.keys(FUNCTIONS).sort();
  assert.deepEqual(Object.keys(RBAC_SCENARIOS).sort(), fns);
  assert.deepEqual(Object.keys(CONTAINER_CALLS).sort(), fns);
  const order = runOrder(Object.keys(CONTAINER_CALLS), CONTAINER_ORDER);
  assert.equal(order[0], 'holder');
  assert.equal(order.at(-1), 'start');
  for (const [fn, place] of Object.entries(CONTAINER_ORDER)) {
    if (typeof place === 'object') for (const a of place.after) assert.ok(order.indexOf(a) < order.indexOf(fn), `${a} before ${fn}`);
  }
});

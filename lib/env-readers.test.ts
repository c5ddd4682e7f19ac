import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accepted, readVariables, wholeNumber } from './env-readers.ts';

test('accepted: the fallback when unset; the value when it passes; empty or failing values refused with the value', () => {
  const even = accepted('2', (s) => /^\d+$/.test(s) && Number(s) % 2 === 0, 'an even number');
  assert.equal(even(undefined), '2');
  assert.equal(even('14'), '14');
  assert.throws(() => even(''), /^Error: expected an even number, got ""$/);
  assert.throws(() => even('7'), /expected an even number, got "7"/);
});

test('wholeNumber: bounds are inclusive, unset and empty are the fallback, fractions and junk refused', () => {
  const r = wholeNumber(7200, 1, 604_800);
  assert.equal(r(undefined), 7200);
  assert.equal(r(''), 7200);
  assert.equal(r('1'), 1);
  assert.equal(r('604800'), 604_800);
  for (const bad of ['0', '604801', '1.5', '2h', '-5']) assert.throws(() => r(bad), new RegExp(`from 1 to 604800, got "${bad}"`), bad);
});

test('readVariables names the variable whose value was refused', () => {
  assert.throws(() => readVariables({ A: wholeNumber(1, 1, 2), B: wholeNumber(1, 1, 2) }, { A: '2', B: '3' }), /^Error: invalid configuration B: expected a whole number from 1 to 2, got "3"$/);
});

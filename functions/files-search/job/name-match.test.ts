import assert from 'node:assert/strict';
import { test } from 'node:test';
import { globMatch, isGlob, nameMatcher, queryLength } from './name-match.ts';

const m = (q: string, name: string) => nameMatcher(q)(name);

test('without * or ? the query is a case-insensitive substring of the name', () => {
  assert.equal(isGlob('level'), false);
  assert.ok(m('level', 'level.dat'));
  assert.ok(m('LeVeL', 'my_LEVEL.dat_old'));
  assert.ok(m('.dat', 'level.dat'));
  assert.equal(m('level', 'levl.dat'), false);
  assert.equal(m('level', 'lev'), false);
});

test('a glob matches the whole name: * any run (also none), ? exactly one character, case-insensitive', () => {
  assert.ok(isGlob('*.yml') && isGlob('a?b'));
  assert.ok(m('*.yml', 'paper.yml'));
  assert.ok(m('*.YML', 'Paper.Yml'));
  assert.ok(m('*.yml', '.yml'), '* takes an empty run');
  assert.equal(m('*.yml', 'paper.yml.bak'), false, 'anchored at the end');
  assert.equal(m('paper*', 'my-paper.yml'), false, 'anchored at the start');
  assert.ok(m('paper*', 'paper-global.yml'));
  assert.ok(m('*lev*', 'LEVEL.dat'));
  assert.ok(m('r.?', 'r.1'));
  assert.equal(m('r.?', 'r.'), false);
  assert.equal(m('r.?', 'r.12'), false);
  assert.ok(m('r.?.?.mca', 'r.0.-1.mca') === false);
  assert.ok(m('r.*.*.mca', 'r.0.-1.mca'));
  assert.ok(m('a*b*c', 'axxbyyc'));
  assert.ok(m('a*b*c', 'abcbc'));
  assert.equal(m('a*b*c', 'abcb'), false);
  assert.ok(m('**', 'anything'));
  assert.ok(m('*', ''));
  assert.ok(m('?*?', 'ab'));
  assert.equal(m('?*?', 'a'), false);
});

test('everything but * and ? is literal: regular-expression and bracket syntax match only itself', () => {
  assert.ok(m('[ab]*', '[ab]x'));
  assert.equal(m('[ab]*', 'ax'), false);
  assert.ok(m('a.c*', 'a.cx'));
  assert.equal(m('a.c*', 'abcx'), false, 'a dot is a dot');
  assert.ok(m('(x|y)+*', '(x|y)+z'));
  assert.equal(m('(x|y)+*', 'x'), false);
  assert.ok(m('\\d*', '\\dx'));
  assert.equal(m('\\d*', '1x'), false);
  assert.ok(m('^$*', '^$'));
  // Substring queries with the same characters are literal too.
  assert.ok(m('a.c', 'xa.cx'));
  assert.equal(m('a.c', 'abc'), false);
});

test('? is one character, not one UTF-16 unit, and non-ASCII names fold', () => {
  assert.ok(m('?.txt', '🎉.txt'));
  assert.ok(m('ÄPFEL*', 'äpfel.txt'));
  assert.equal(queryLength('🎉'), 1);
  assert.equal(queryLength('ab'), 2);
});

test('a pathological glob stays fast (no exponential backtracking)', () => {
  const name = Array.from('a'.repeat(5000) + 'b');
  const pattern = Array.from('*a*a*a*a*a*a*a*a*a*a*c');
  const t0 = performance.now();
  assert.equal(globMatch(pattern, name), false);
  assert.ok(performance.now() - t0 < 500);
});

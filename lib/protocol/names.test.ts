import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NAME_MAX, nameCharFault, newNameFault, newPathFault, PATH_MAX, pathLimitFault, shownName } from './names.ts';

test('the limits: a NUL, a name part over 255 bytes, a path over 4096 bytes; counted in UTF-8 bytes', () => {
  assert.equal(pathLimitFault('plugins/ok.yml'), undefined);
  assert.equal(pathLimitFault(''), undefined);
  assert.equal(pathLimitFault('a\0b'), 'holds a NUL byte');
  assert.equal(pathLimitFault('n'.repeat(NAME_MAX)), undefined);
  assert.equal(pathLimitFault(`d/${'n'.repeat(NAME_MAX + 1)}`), 'has a name longer than 255 bytes');
  // 128 two-byte characters: 128 characters, 256 bytes.
  assert.equal(pathLimitFault('é'.repeat(128)), 'has a name longer than 255 bytes');
  const parts = (n: number) => Array.from({ length: n }, () => 'p'.repeat(200)).join('/');
  const exactly = `${parts(20)}/${'q'.repeat(PATH_MAX - parts(20).length - 1)}`;
  assert.equal(Buffer.byteLength(exactly), PATH_MAX);
  assert.equal(pathLimitFault(exactly), undefined);
  assert.equal(pathLimitFault(`${exactly}q`), 'is longer than 4096 bytes');
});

test('the characters of a new name: controls C0 and C1, bidirectional controls, lone surrogates', () => {
  for (const ok of ['plain.txt', 'été 说明 🐱.yml', 'a b', 'ünï', 'x\u200dy' /* a joiner is no control */]) assert.equal(nameCharFault(ok), undefined, ok);
  assert.equal(nameCharFault('a\u0007b'), 'holds a control character (U+0007)');
  assert.equal(nameCharFault('line\nbreak'), 'holds a control character (U+000A)');
  assert.equal(nameCharFault('del\u007f'), 'holds a control character (U+007F)');
  assert.equal(nameCharFault('c1\u0085'), 'holds a control character (U+0085)');
  assert.equal(nameCharFault('c1\u009f'), 'holds a control character (U+009F)');
  for (const ch of ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c']) {
    assert.match(nameCharFault(`photo${ch}gpj.exe`) ?? '', /^holds a bidirectional control character \(U\+[0-9A-F]{4}\)/, JSON.stringify(ch));
  }
  assert.equal(nameCharFault('half\ud800'), 'is not valid UTF-8');
  assert.equal(nameCharFault('\udc00'), 'is not valid UTF-8');
});

test('one new name: not empty, not . or .., no slash, the limits, the characters', () => {
  assert.equal(newNameFault('world.zip'), undefined);
  assert.equal(newNameFault(''), 'is empty');
  assert.equal(newNameFault('.'), 'cannot be . or ..');
  assert.equal(newNameFault('..'), 'cannot be . or ..');
  assert.equal(newNameFault('a/b.zip'), 'must be one name, without a slash');
  assert.equal(newNameFault('a\0.zip'), 'holds a NUL byte');
  assert.equal(newNameFault(`${'n'.repeat(300)}.zip`), 'has a name longer than 255 bytes');
  assert.match(newNameFault('evil\u202egpj.zip') ?? '', /bidirectional control character \(U\+202E\)/);
});

test('a new path: the limits, and the characters of every name in it', () => {
  assert.equal(newPathFault('plugins/new folder/a.txt'), undefined);
  assert.equal(newPathFault(`a/${'n'.repeat(300)}`), 'has a name longer than 255 bytes');
  assert.equal(newPathFault('a\u0001b/c.txt'), 'has a name that holds a control character (U+0001)');
  assert.equal(newPathFault('a/c\u202e.txt'), 'has a name that holds a bidirectional control character (U+202E), which makes a name read otherwise than it is');
});

test('a refused name is shown with its invisible characters spelled out', () => {
  assert.equal(shownName('photo\u202egpj.exe'), 'photo<U+202E>gpj.exe');
  assert.equal(shownName('a\nb\0c\ud800'), 'a<U+000A>b<U+0000>c<U+D800>');
  assert.equal(shownName('été 🐱'), 'été 🐱');
});

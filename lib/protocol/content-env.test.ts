import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { CONTENT_PART_CHARS, CONTENT_PART_ENV_PREFIX, CONTENT_PARTS_ENV, ContentEnvError, decodeContentEnv, encodeContentEnv } from './content-env.ts';

function toEnv(vars: { name: string; value: string }[]): Record<string, string> {
  return Object.fromEntries(vars.map((v) => [v.name, v.value]));
}

test('content is cut into parts of at most 65536 base64 characters: pinned part counts', () => {
  const cases: [number, number][] = [
    [0, 0],
    [1, 1],
    [49152, 1],
    [49153, 2],
    [98304, 2],
    [98305, 3],
    [262144, 6],
  ];
  for (const [bytes, parts] of cases) {
    const vars = encodeContentEnv(Buffer.alloc(bytes, 0xab));
    assert.equal(vars[0].name, CONTENT_PARTS_ENV);
    assert.equal(vars[0].value, String(parts), `${bytes} bytes`);
    assert.equal(vars.length, parts + 1, `${bytes} bytes`);
    vars.slice(1).forEach((v, i) => {
      assert.equal(v.name, CONTENT_PART_ENV_PREFIX + i);
      assert.ok(v.value.length >= 1 && v.value.length <= CONTENT_PART_CHARS);
      // name + '=' + value stays under MAX_ARG_STRLEN (128 KiB).
      assert.ok(v.name.length + 1 + v.value.length < 128 * 1024);
    });
  }
});

test('empty content is PARTS=0 and no part variables, and decodes to empty bytes', () => {
  const vars = encodeContentEnv(Buffer.alloc(0));
  assert.deepEqual(vars, [{ name: CONTENT_PARTS_ENV, value: '0' }]);
  const out = decodeContentEnv(toEnv(vars));
  assert.ok(Buffer.isBuffer(out));
  assert.equal(out.length, 0);
});

test('round trip is byte exact, including NUL, 0xff and the 256 KiB maximum', () => {
  for (const content of [Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x0a]), Buffer.from('a'), Buffer.from('ab'), Buffer.from('abc'), randomBytes(49153), randomBytes(262144)]) {
    const vars = encodeContentEnv(content);
    assert.deepEqual(decodeContentEnv(toEnv(vars)), content);
    // Only standard padded base64 appears; the parts join to exactly the encoding.
    assert.equal(
      vars
        .slice(1)
        .map((v) => v.value)
        .join(''),
      content.toString('base64'),
    );
  }
});

test('decode refuses a missing, empty, non-integer or negative count', () => {
  const bad: Record<string, string | undefined>[] = [
    {},
    { [CONTENT_PARTS_ENV]: '' },
    { [CONTENT_PARTS_ENV]: 'two' },
    { [CONTENT_PARTS_ENV]: '1.0' },
    { [CONTENT_PARTS_ENV]: ' 1' },
    { [CONTENT_PARTS_ENV]: '-1' },
  ];
  for (const env of bad) {
    assert.throws(() => decodeContentEnv(env), ContentEnvError, JSON.stringify(env));
  }
});

test('decode refuses a missing part (count 3 with only 2 parts set, or a gap)', () => {
  assert.throws(() => decodeContentEnv({ [CONTENT_PARTS_ENV]: '3', FELIS_FILE_CONTENT_0: 'QUFB', FELIS_FILE_CONTENT_1: 'QUFB' }), /FELIS_FILE_CONTENT_2 is not set/);
  assert.throws(() => decodeContentEnv({ [CONTENT_PARTS_ENV]: '2', FELIS_FILE_CONTENT_1: 'QUFB' }), /FELIS_FILE_CONTENT_0 is not set/);
});

test('decode refuses invalid base64 that Buffer.from would accept', () => {
  for (const s of ['@@@@', 'QUF', 'QQ=', 'QQ===', 'Q===', 'QU=B', 'QUFB\n', 'QU FB', 'QUFB====', '-_-_', '=AAA']) {
    assert.throws(() => decodeContentEnv({ [CONTENT_PARTS_ENV]: '1', FELIS_FILE_CONTENT_0: s }), ContentEnvError, JSON.stringify(s));
  }
  // Padding in the middle of the joined text (end of a non-final part) is refused too.
  assert.throws(() => decodeContentEnv({ [CONTENT_PARTS_ENV]: '2', FELIS_FILE_CONTENT_0: 'QQ==', FELIS_FILE_CONTENT_1: 'QUFB' }), ContentEnvError);
});

test('decode accepts a plus-signed count and valid padding forms', () => {
  assert.deepEqual(decodeContentEnv({ [CONTENT_PARTS_ENV]: '+1', FELIS_FILE_CONTENT_0: 'QQ==' }), Buffer.from('A'));
  assert.deepEqual(decodeContentEnv({ [CONTENT_PARTS_ENV]: '1', FELIS_FILE_CONTENT_0: 'QUE=' }), Buffer.from('AA'));
  assert.deepEqual(decodeContentEnv({ [CONTENT_PARTS_ENV]: '0' }), Buffer.alloc(0));
});

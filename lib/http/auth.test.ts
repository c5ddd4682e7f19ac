import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { tokenFromEnv, tokenMatches } from './auth.ts';

test('tokens compare exactly, and an empty expected token matches nothing', () => {
  assert.equal(tokenMatches('abc', 'abc'), true);
  assert.equal(tokenMatches('abc', 'abd'), false);
  assert.equal(tokenMatches('abc', 'abcd'), false);
  assert.equal(tokenMatches('', ''), false);
});

test('the token comes from FELIS_TOKEN, else a trimmed file; none configured is an error', (t) => {
  assert.equal(tokenFromEnv({ FELIS_TOKEN: 'x1' })(), 'x1');
  const dir = mkdtempSync(join(tmpdir(), 'felis-auth-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'token'), 'from-file\n');
  assert.equal(tokenFromEnv({ FELIS_TOKEN_FILE: join(dir, 'token') })(), 'from-file');
  assert.throws(() => tokenFromEnv({}), /no API token configured/);
});

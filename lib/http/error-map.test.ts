import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { modulesUnder } from '../../scripts/check-imports.ts';
import { DomainError, domainError, ERROR_CODES, ERROR_KINDS, isErrorCode } from '../errors.ts';
import { ANSWER_KINDS } from '../protocol/answer-kind.ts';
import { KIND_STATUS, mapDomainError } from './error-map.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('every kind has one status, and no two kinds share one', () => {
  assert.deepEqual(Object.keys(KIND_STATUS).sort(), [...ERROR_KINDS].sort());
  const statuses = Object.values(KIND_STATUS);
  assert.equal(new Set(statuses).size, statuses.length);
});

test('a Job refusal passed on keeps the status the Job gave', () => {
  for (const [status, kind] of Object.entries(ANSWER_KINDS)) assert.equal(KIND_STATUS[kind], Number(status), kind);
});

test("a domain error answers its kind's status, its code, and its caller message", () => {
  assert.deepEqual(mapDomainError(domainError('export_expired', 'sign a new one')), { status: 410, code: 'export_expired', message: 'sign a new one' });
  assert.deepEqual(mapDomainError(new DomainError('upload_incomplete', 'conflict', 'holds 3 of 5')), { status: 409, code: 'upload_incomplete', message: 'holds 3 of 5' });
  assert.deepEqual(mapDomainError(domainError('files_timeout', 'timed out on job x', { callerMessage: 'retry' })), { status: 504, code: 'files_timeout', message: 'retry' });
  assert.equal(mapDomainError(new Error('boom')), undefined);
});

/**
 * Every status and code written out in the code: an ApiError or an envelope of the HTTP edge, and
 * the refusals the Job program answers with (passed on by the functions as they come).
 */
function literalAnswers(): { where: string; status: number; code: string }[] {
  const found: { where: string; status: number; code: string }[] = [];
  const patterns = [
    /new ApiError\(\s*(\d{3}),\s*'([a-z_]+)'/g,
    /sendError\(\s*\w+,\s*(\d{3}),\s*'([a-z_]+)'/g,
    /envelopeResponse\(\s*(\d{3}),\s*'([a-z_]+)'/g,
    /status: (\d{3}), code: '([a-z_]+)'/g,
    /new SessionError\(\s*(\d{3}),\s*'([a-z_]+)'/g,
    /refusal\(\s*res,\s*(\d{3}),\s*'([a-z_]+)'/g,
    /\[(\d{3}), '([a-z_]+)'\]/g,
  ];
  for (const dir of ['lib', 'functions', 'job']) {
    for (const file of modulesUnder(join(root, dir))) {
      const text = readFileSync(file, 'utf8');
      for (const re of patterns) for (const m of text.matchAll(re)) found.push({ where: file.slice(root.length), status: Number(m[1]), code: m[2] });
    }
  }
  return found;
}

test('every status and code the code answers with is in the catalogue, with a kind of that status', () => {
  const found = literalAnswers();
  assert.ok(found.length > 40, `only ${found.length} answers found: the patterns no longer match the code`);
  for (const { where, status, code } of found) {
    if (status >= 500 && code === 'internal') continue;
    assert.ok(isErrorCode(code), `${where}: ${status} ${code} is not in the catalogue (lib/errors.ts)`);
    const statuses = ERROR_CODES[code].kinds.map((k) => KIND_STATUS[k]);
    assert.ok((statuses as number[]).includes(status), `${where}: ${code} is answered ${status}, but its kinds give ${statuses.join(', ')}`);
  }
});

test('every catalogued code is answered somewhere, or comes from the Job program', () => {
  const text = ['lib', 'functions', 'job']
    .flatMap((d) => modulesUnder(join(root, d)))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  for (const code of Object.keys(ERROR_CODES)) assert.ok(text.includes(`'${code}'`), `${code} is catalogued but never used`);
});

/**
 * The rules the image rehearsal reads the Dockerfile and .dockerignore by (scripts/image-rehearsal.ts),
 * without building anything; `npm run test:image` performs the build itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyContext, dockerignore, envPairs, parseDockerfile } from '../scripts/image-rehearsal.ts';
import { ROOT } from './support/stack.ts';

test('the Dockerfile reads as a build stage and a final stage whose steps the rehearsal can all perform', () => {
  const [build, final, ...more] = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  assert.equal(more.length, 0);
  assert.equal(build!.name, 'build');
  assert.ok(build!.steps.some((s) => s.op === 'RUN' && /\bnpm ci\b/.test(s.args[0]!)));
  assert.ok(build!.steps.some((s) => s.op === 'RUN' && s.args[0]!.includes('scripts/build.ts')));
  const copies = final!.steps.filter((s) => s.op === 'COPY');
  assert.ok(copies.every((c) => c.flags.from === 'build'), 'the final stage takes only build output');
  const ops = final!.steps.map((s) => s.op);
  // The cache is filled after USER: Node keys it by the user id that reads it.
  assert.ok(ops.lastIndexOf('RUN') > ops.indexOf('USER'));
  const env = Object.assign({}, ...final!.steps.filter((s) => s.op === 'ENV').map((s) => envPairs(s.args))) as Record<string, string>;
  assert.equal(env.NODE_COMPILE_CACHE, '/app/compile-cache');
});

test('an instruction the rehearsal cannot perform fails it instead of being skipped', () => {
  assert.throws(() => parseDockerfile('FROM node:24-slim\nADD https://example.com/x /x\n'), /ADD is not something the rehearsal can perform/);
  assert.throws(() => parseDockerfile('FROM node:24-slim\nCOPY --link a b\n'), /COPY --link/);
  assert.throws(() => parseDockerfile('RUN true\n'), /before any FROM/);
  assert.throws(() => envPairs(['A="x y"']), /K=V/);
});

test('continuation lines join, comments and blank lines are skipped, CMD in JSON form is read', () => {
  const [s] = parseDockerfile('# c\nFROM node:24-slim AS one\n\nENV A=1 \\\n    B=2\nCOPY --from=one --chmod=0755 /a /b\nCMD ["node", "x.mjs"]\n');
  assert.equal(s!.name, 'one');
  assert.deepEqual(envPairs(s!.steps[0]!.args), { A: '1', B: '2' });
  assert.deepEqual(s!.steps[1]!.flags, { from: 'one', chmod: '0755' });
  assert.deepEqual(s!.steps[1]!.args, ['/a', '/b']);
  assert.deepEqual(s!.steps[2]!.args, ['node', 'x.mjs']);
});

test('.dockerignore: the last matching pattern wins and a directory pattern covers what is inside it', () => {
  const ig = dockerignore('*\n!lib/\n**/*.test.ts\nlib/testing/\n!lib/testing/keep.ts\n# a comment\n');
  assert.equal(ig.includes('README.md'), false);
  assert.equal(ig.includes('lib/config.ts'), true);
  assert.equal(ig.includes('lib/a/b/c.ts'), true);
  assert.equal(ig.includes('lib/config.test.ts'), false);
  assert.equal(ig.includes('lib/a/b/c.test.ts'), false);
  assert.equal(ig.includes('lib/testing/kit.ts'), false);
  assert.equal(ig.includes('lib/testing/keep.ts'), true);
  assert.equal(ig.mayIncludeBelow('node_modules'), false, 'an excluded tree no exception reaches is not walked');
  assert.equal(ig.mayIncludeBelow('lib'), true);
});

test('the build context is copied as .dockerignore sends it', () => {
  const from = mkdtempSync(join(tmpdir(), 'felis-ctx-'));
  try {
    mkdirSync(join(from, 'src/deep'), { recursive: true });
    mkdirSync(join(from, 'node_modules/x'), { recursive: true });
    for (const f of ['package.json', 'secret.env', 'src/a.ts', 'src/a.test.ts', 'src/deep/b.ts', 'node_modules/x/i.js']) writeFileSync(join(from, f), f);
    const sent = copyContext(from, join(from, '..', `${from.split('/').pop()}-out`), '*\n!package.json\n!src/\n**/*.test.ts\n');
    assert.deepEqual(sent, ['package.json', 'src/a.ts', 'src/deep/b.ts']);
    rmSync(join(from, '..', `${from.split('/').pop()}-out`), { recursive: true, force: true });
  } finally {
    rmSync(from, { recursive: true, force: true });
  }
});

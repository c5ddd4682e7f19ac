/**
 * The image as the real builder made it from the unchanged Dockerfile: its configuration (a numeric
 * non-root user, the compile cache, the default command), what is in it (bundles and their compile
 * cache, no node_modules, sources or source maps), and the build context the builder read with
 * `.dockerignore` (no tests, local state or checkout metadata go to a builder).
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ROOT } from '../support/stack.ts';
import { IMAGE, podman, TEST_LABEL } from './podman.ts';

const RUN = process.env.FELIS_CONTAINER_RUN ?? '/tmp';
const ULIMITS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];

/** Runs `argv` in a throwaway container of `image`, as its user, with no network and a read-only root. */
function inImage(image: string, argv: string[]): string {
  return podman(['run', '--rm', '--label', TEST_LABEL, '--network', 'none', '--read-only', '--read-only-tmpfs=false', ...ULIMITS, '--entrypoint', JSON.stringify(argv), image]);
}

test('the image: uid 1000, the compile cache set, holder by default', () => {
  const cfg = JSON.parse(podman(['image', 'inspect', '--format', '{{json .Config}}', IMAGE])) as { User: string; Cmd: string[]; Env: string[]; WorkingDir: string };
  assert.equal(cfg.User, '1000:1000', 'numeric, so runAsNonRoot can verify it');
  assert.deepEqual(cfg.Cmd, ['node', '/app/functions/holder.mjs']);
  assert.ok(cfg.Env.includes('NODE_COMPILE_CACHE=/app/compile-cache'), cfg.Env.join(' '));
  assert.ok(cfg.Env.includes('NODE_ENV=production'), cfg.Env.join(' '));
  assert.equal(inImage(IMAGE, ['id', '-u']).trim(), '1000');
  assert.match(inImage(IMAGE, ['node', '--version']).trim(), /^v24\./);
});

test('what the image holds: bundles, the Job program, codecs and the compile cache; no node_modules, sources or maps', () => {
  const files = inImage(IMAGE, ['find', '/app', '/usr/local/bin/felis', '-xdev']).split('\n').filter(Boolean);
  assert.ok(files.includes('/app/functions/holder.mjs'), files.slice(0, 20).join('\n'));
  assert.ok(
    files.some((f) => f.startsWith('/app/wasm/')),
    "the archive codecs' WebAssembly",
  );
  assert.deepEqual(
    files.filter((f) => f.includes('node_modules') || f.endsWith('.map') || f.endsWith('.ts')),
    [],
  );
  const cached = files.filter((f) => f.startsWith('/app/compile-cache/') && !f.endsWith('/')).length;
  assert.ok(cached > 20, `the compile cache holds the bundles' code (${cached} entries)`);
  assert.ok(!inImage(IMAGE, ['ls', '/tmp']).includes('image-compile-cache'), 'the warm-up script is removed after it ran');
  const felis = inImage(IMAGE, ['stat', '-c', '%a %u', '/usr/local/bin/felis']).trim();
  assert.equal(felis, '755 0', "felis: executable, and not the run user's to change");
  assert.match(inImage(IMAGE, ['head', '-c', '20', '/usr/local/bin/felis']), /^#!\/usr\/bin\/env node\n/);
  // The compile cache is the image user's (Node keys it by user id) and read-only at run time anyway.
  assert.match(inImage(IMAGE, ['stat', '-c', '%u', '/app/compile-cache']).trim(), /^1000$/);
});

const probeDir = mkdtempSync(join(RUN, 'context-probe-'));
const probe = `localhost/felis-world-context-probe:${process.pid}`;
after(() => {
  try {
    podman(['rmi', '-f', probe]);
  } catch {
    // Not built.
  }
  rmSync(probeDir, { recursive: true, force: true });
});

test('.dockerignore: the builder gets the sources and the lock file, never tests, test kits, node_modules, local state or .git', { timeout: 300_000 }, () => {
  // The same context and ignore file the real build reads, copied whole into a probe image.
  const dockerfile = join(probeDir, 'Dockerfile');
  writeFileSync(dockerfile, 'FROM docker.io/library/node:24-slim\nCOPY . /ctx\n');
  podman(['build', '--pull=never', '--network=none', '--layers=false', ...ULIMITS, '-f', dockerfile, '-t', probe, ROOT]);
  const context = inImage(probe, ['find', '/ctx', '-type', 'f'])
    .split('\n')
    .filter(Boolean)
    .map((f) => f.slice('/ctx/'.length));
  for (const f of [
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'scripts/build.ts',
    'functions/holder/app.ts',
    'functions/files-copy/op.ts',
    'functions/files-copy/job/copy.ts',
    'job/main.ts',
    'docs/openapi.json',
  ])
    assert.ok(context.includes(f), `${f} is sent`);
  const leaked = context.filter(
    (f) =>
      f.endsWith('.test.ts') ||
      f.endsWith('.test-kit.ts') ||
      f.startsWith('lib/testing/') ||
      f.startsWith('job/testing/') ||
      f.startsWith('node_modules/') ||
      f.startsWith('dist/') ||
      f.startsWith('data/') ||
      f.startsWith('.git') ||
      f.startsWith('test/') ||
      f.startsWith('bench/') ||
      f === 'README.md',
  );
  assert.deepEqual(leaked, []);
});

/**
 * `npm run test:image`: the Dockerfile's steps performed without docker (scripts/image-rehearsal.ts):
 * the build context as .dockerignore sends it, `npm ci --offline` and `npm run build` in a copy of
 * it, the final stage's layout and its compile-cache warm-up, as the image's user. Then, from that
 * image root made read-only: the Job program lists a world, every function answers /healthz with
 * the image's env and loads its routes from the image tree alone (and the compile cache made at
 * build time is what it runs on), holder answers a real request against the embedded cluster, and
 * nothing was written inside the image.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  makeReadOnly,
  makeWritable,
  offlineKubeconfig,
  parseDockerfile,
  rehearse,
  runImageFelis,
  scratchFor,
  startImageFunction,
  treeState,
  type Rehearsal,
} from '../scripts/image-rehearsal.ts';
import { ROOT, startStack, TOKEN, type Stack } from './support/stack.ts';

let r: Rehearsal;
let before_: Map<string, string>;
before(
  async () => {
    r = rehearse({ root: ROOT, reuseNodeModules: process.env.FELIS_IMAGE_REUSE_NODE_MODULES === '1', log: (l) => console.error(`# ${l}`) });
    before_ = treeState(r.imageRoot);
    makeReadOnly(r.imageRoot);
  },
  { timeout: 600_000 },
);
after(() => {
  if (!r) return;
  makeWritable(r.imageRoot);
  r.remove();
});

test('the Dockerfile: Node 24 slim in both stages, a numeric non-root user, the compile cache set and filled', () => {
  const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  assert.equal(stages.length, 2);
  for (const s of stages) assert.match(s.from, /^node:24[\w.-]*-slim$/);
  assert.ok(r.user && /^\d+:\d+$/.test(r.user) && !r.user.startsWith('0:'), `USER ${r.user}`);
  assert.equal(r.env.NODE_COMPILE_CACHE, join(r.imageRoot, 'app/compile-cache'));
  assert.deepEqual(r.cmd, ['node', '/app/functions/holder.mjs']);
  const cache = join(r.imageRoot, 'app/compile-cache');
  const files = readdirSync(cache, { recursive: true }).length;
  assert.ok(files > 20, `the compile cache holds the bundles' code (${files} entries)`);
});

test('.dockerignore: the context holds the sources and lock file, never tests, test kits, node_modules or local state', () => {
  assert.ok(r.context.includes('package-lock.json'));
  assert.ok(r.context.includes('scripts/build.ts'));
  assert.ok(r.context.includes('functions/holder/main.ts'));
  assert.ok(r.context.includes('job/main.ts'));
  const leaked = r.context.filter((f) => f.endsWith('.test.ts') || f.startsWith('lib/testing/') || f.startsWith('node_modules/') || f.startsWith('dist/') || f.startsWith('data/') || f.startsWith('.git') || f.startsWith('test/') || f === 'README.md');
  assert.deepEqual(leaked, []);
});

test('the image has no node_modules and no source maps; felis is executable with a node shebang', () => {
  const all = readdirSync(r.imageRoot, { recursive: true }).map(String);
  assert.deepEqual(all.filter((f) => f.includes('node_modules') || f.endsWith('.map') || f.endsWith('.ts')), []);
  assert.ok(all.includes(join('app', 'functions', 'holder.mjs')));
  assert.ok(!all.includes(join('tmp', 'image-compile-cache.mjs')), 'the warm-up script is removed after it ran');
  assert.match(readFileSync(join(r.imageRoot, 'usr/local/bin/felis'), 'utf8'), /^#!\/usr\/bin\/env node\n/);
});

test('/usr/local/bin/felis files --op list runs from the image against a world and prints its result line', () => {
  const world = scratchFor(r, 'world');
  mkdirSync(join(world, 'config'), { recursive: true });
  writeFileSync(join(world, 'config', 'server.properties'), 'motd=hi\n');
  const res = runImageFelis(r, ['files', '--op', 'list', '--path', 'config', '--worlds-root', world], scratchFor(r, 'job-cwd'));
  assert.equal(res.status, 0, res.stdout + res.stderr);
  const line = res.stdout.split('\n').find((l) => l.startsWith('FELIS-FILES-RESULT: '));
  assert.ok(line, res.stdout);
  const result = JSON.parse(line.slice('FELIS-FILES-RESULT: '.length)) as { entries: { name: string }[] };
  assert.deepEqual(result.entries.map((e) => e.name), ['server.properties']);
});

test('every function starts from the read-only image with its env, answers /healthz, and loads on the compile cache made at build time', { timeout: 180_000 }, async () => {
  const functions = readdirSync(join(r.imageRoot, 'app/functions'))
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => f.slice(0, -4));
  assert.ok(functions.length >= 10, functions.join(', '));
  const cwd = scratchFor(r, 'fn-cwd');
  const kubeconfig = offlineKubeconfig(cwd);
  for (const fn of functions) {
    // PORT 0 and loopback rather than the image's 8080 on every address: this machine is shared.
    const s = await startImageFunction(r, fn, { PORT: '0', HOST: '127.0.0.1', FELIS_TOKEN: TOKEN, KUBECONFIG: kubeconfig, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' }, cwd);
    try {
      const h = await fetch(`${s.url}/healthz`);
      assert.equal(h.status, 200, s.output());
      assert.deepEqual(await h.json(), { status: 'ok' });
      await s.loaded();
    } finally {
      assert.equal(await s.stop(), 0, `${fn} stops cleanly on SIGTERM:\n${s.output()}`);
    }
    // Every module of the image this start compiled came from the cache, and none was rejected.
    const compiled = new Set([...s.output().matchAll(/reading cache from \S+ for ESM (file:\/\/\S+?)\.\.\./g)].map((m) => m[1]!));
    const accepted = new Set([...s.output().matchAll(/V8 code cache for ESM (file:\/\/\S+) was accepted/g)].map((m) => m[1]!));
    assert.ok([...compiled].some((u) => u.includes('/chunks/client-parts-')), `${fn}: the Kubernetes client was loaded through the cache:\n${s.output()}`);
    assert.deepEqual([...compiled].filter((u) => !accepted.has(u)), [], `${fn}: modules compiled without the build-time cache`);
    assert.doesNotMatch(s.output(), /cache miss|Cannot create cache directory/i, fn);
  }
});

let stack: Stack | undefined;
after(async () => {
  await stack?.close();
});

test('holder from the image answers a real request against the embedded cluster', { timeout: 60_000 }, async () => {
  stack = await startStack();
  const cwd = scratchFor(r, 'holder-cwd');
  const kubeconfig = join(cwd, 'function.kubeconfig');
  writeFileSync(kubeconfig, stack.cluster.kubeconfigYaml(stack.cluster.tokenFor('minecraft', 'felis-world')), { mode: 0o644 });
  const s = await startImageFunction(r, 'holder', { PORT: '0', HOST: '127.0.0.1', FELIS_TOKEN: TOKEN, KUBECONFIG: kubeconfig }, cwd);
  try {
    const res = await fetch(`${s.url}/api/v1/servers/survival/holder`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { held: false });
    // The API reference from the image alone: the document and the page's files beside the bundles.
    const doc = await fetch(`${s.url}/openapi.json`);
    assert.equal(doc.status, 200);
    assert.deepEqual(await doc.json(), JSON.parse(readFileSync(join(ROOT, 'docs/openapi.json'), 'utf8')));
    for (const a of ['swagger-ui-bundle.js', 'swagger-ui.css']) {
      const asset = await fetch(`${s.url}/docs/assets/${a}`);
      assert.equal(asset.status, 200, `${a}: ${s.output()}`);
      assert.ok((await asset.arrayBuffer()).byteLength > 100_000, a);
    }
  } finally {
    assert.equal(await s.stop(), 0, s.output());
  }
});

test('nothing was written inside the image while it ran', () => {
  makeWritable(r.imageRoot);
  const now = treeState(r.imageRoot);
  // Permissions were taken away and given back; compare what else there is.
  const strip = (m: Map<string, string>) => new Map([...m].map(([k, v]) => [k, v.split(' ').slice(1).join(' ')]));
  assert.deepEqual(strip(now), strip(before_));
  makeReadOnly(r.imageRoot);
});

/**
 * The bundles `npm run build` makes are what a Knative service runs: start one as its own process
 * with a KUBECONFIG, as production would, call it, and stop it with SIGTERM.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, ROOT, TOKEN, type Stack } from './support/stack.ts';

let s: Stack;
before(async () => {
  s = await startStack();
});
after(async () => {
  await s?.close();
});

test('dist/functions/holder.mjs serves with KUBECONFIG and stops cleanly on SIGTERM', async () => {
  const bundle = join(ROOT, 'dist/functions/holder.mjs');
  assert.ok(existsSync(bundle), 'npm run build made the bundle');
  const kubeconfig = join(s.dataDir, 'function.kubeconfig');
  writeFileSync(kubeconfig, s.cluster.kubeconfigYaml(s.cluster.tokenFor('minecraft', 'felis-world')));
  const child = spawn(process.execPath, [bundle], {
    env: { PATH: process.env.PATH, KUBECONFIG: kubeconfig, PORT: '0', HOST: '127.0.0.1', FELIS_TOKEN: TOKEN, FELIS_IMAGE: 'felis-world/files:dev' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr.on('data', (d) => (out += d));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line: ${out}`)), 15_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      const m = /"port":(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  try {
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.equal(health.status, 200);
    const h = await fetch(`http://127.0.0.1:${port}/api/v1/servers/survival/holder`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(h.status, 200, await h.clone().text());
    assert.deepEqual(await h.json(), { held: false });
    const other = await fetch(`http://127.0.0.1:${port}/api/v1/servers/survival/files`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(other.status, 404, 'a function serves only its own routes');
  } finally {
    child.kill('SIGTERM');
  }
  const [code] = await once(child, 'exit');
  assert.equal(code, 0, out);
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { jobToken, tokenDigest } from '../../lib/protocol/job-token.ts';
import { RESULT_PREFIX } from '../../lib/protocol/result.ts';
import { runCli } from '../cli.ts';
import { INDEX_MIN_ENTRIES } from '../listing/list-index.ts';
import { makeWorld } from '../testing/world.ts';
import { runServe } from './run.ts';
import type { Serving } from './server.ts';

const TOKEN = jobToken(Buffer.alloc(32, 7), 'files-survival-b0001');
const digest = tokenDigest(TOKEN);

function get(s: Serving, p: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: s.address.address, port: s.address.port, path: p, headers: { authorization: `Bearer ${TOKEN}` }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString()));
    });
    req.on('error', reject);
    req.end();
  });
}

const quiet = { stdout: () => {}, stderr: () => {} };

test('FELIS_SCRATCH_DIR must be absolute', async () => {
  const w = makeWorld();
  let err = '';
  const code = await runCli(
    ['files', '--serve', '--worlds-root', w.root],
    { FELIS_POD_IP: '127.0.0.1', FELIS_SERVE_TOKEN_SHA256: digest, FELIS_SCRATCH_DIR: 'scratch' },
    { stdout: () => {}, stderr: (t) => void (err += t) },
  );
  assert.equal(code, 2);
  assert.match(err, /FELIS_SCRATCH_DIR/);
});

test("with FELIS_SCRATCH_DIR, serving keeps a big folder's index there (not in the world), pages equal the one-shot Job's, and it is gone at the stop", { timeout: 120_000 }, async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('big'));
  const made = spawnSync('sh', ['-c', `seq -f 'n-%06g' 0 ${INDEX_MIN_ENTRIES} | xargs touch`], { cwd: w.p('big') });
  assert.equal(made.status, 0, made.stderr.toString());
  // The racy rule: an index is trusted only for a folder unchanged for 2 s before the scan.
  await new Promise((r) => setTimeout(r, 2100));
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-serve-scratch-'));
  try {
    let stop!: () => void;
    let serving!: Serving;
    const done = runServe(w.root, { FELIS_POD_IP: '127.0.0.1', FELIS_SERVE_PORT: '0', FELIS_SERVE_TOKEN_SHA256: digest, FELIS_SCRATCH_DIR: scratch }, quiet, {
      onSignal: (s) => (stop = s),
      onListening: (s) => (serving = s),
      statfs: () => ({ bavail: 1n, bsize: 4096n }),
    });
    while (!serving) await new Promise((r) => setTimeout(r, 5));
    const worldBefore = fs.readdirSync(w.base, { recursive: true }).length;
    const first = await get(serving, '/list?path=big&limit=100&after=n-010000');
    // Built once the recording of the scan's names is gone.
    const built = () => fs.readdirSync(scratch).filter((f) => !f.endsWith('.sorted')).length === 0;
    for (let i = 0; i < 400 && !built(); i++) await new Promise((r) => setTimeout(r, 25));
    assert.deepEqual(fs.readdirSync(scratch).filter((f) => f.endsWith('.sorted')).length, 1, 'the index is in the scratch folder');
    assert.equal(fs.readdirSync(w.base, { recursive: true }).length, worldBefore, 'nothing new beside the world');
    const second = await get(serving, '/list?path=big&limit=100&after=n-010000');
    assert.equal(second, first);
    let out = '';
    await runCli(['files', '--op', 'list', '--path', 'big', '--worlds-root', w.root, '--limit', '100', '--after', 'n-010000'], {}, { stdout: (t) => void (out += t), stderr: () => {} });
    const oneShot = JSON.parse(out.slice(RESULT_PREFIX.length));
    assert.deepEqual({ ...JSON.parse(second), avail: 0 }, { ...oneShot, avail: 0 });
    stop();
    assert.equal(await done, 0);
    assert.deepEqual(fs.readdirSync(scratch), [], 'the indexes go with the server');
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

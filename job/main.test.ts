import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { encodeContentEnv } from '../lib/protocol/content-env.ts';
import { RESULT_PREFIX } from '../lib/protocol/result.ts';
import { parseResultPayload } from '../lib/protocol/result-parse.ts';
import { makeWorld, sha256 } from './testing/world.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const projectRoot = path.resolve(here, '..');
const NODE = path.join(projectRoot, 'node_modules/.bin/node');
const MAIN = path.join(projectRoot, 'job/main.ts');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function felis(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(NODE, [MAIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, cwd: projectRoot }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

function resultOf(run: Run) {
  const lines = run.stdout.split('\n');
  assert.equal(lines.length, 2, `exactly one line: ${JSON.stringify(run.stdout)}`);
  assert.equal(lines[1], '');
  assert.ok(lines[0].startsWith(RESULT_PREFIX), lines[0]);
  return parseResultPayload(lines[0].slice(RESULT_PREFIX.length));
}

test('end to end: node job/main.ts files --op ... prints one result line and exits 0/1/2', async () => {
  const w = makeWorld();
  const data = Buffer.from('hello\nrcon.password=zzz\n');
  const writeEnv = Object.fromEntries(encodeContentEnv(data).map((v) => [v.name, v.value]));
  const [list, read, write, missing, outside, noFiles, badFlag, noOp, chmod, badEnv, singleDash] = await Promise.all([
    felis(['files', '--op', 'list', '--path', 'config', '--worlds-root', w.root]),
    felis(['files', '--op', 'read', '--path', 'server.properties', '--worlds-root', w.root]),
    felis(['files', '--op', 'write', '--path', 'plugins.txt', '--worlds-root', w.root, '--sha256', sha256(data)], writeEnv),
    felis(['files', '--op', 'read', '--path', 'missing.txt', '--worlds-root', w.root]),
    felis(['files', '--op', 'read', '--path', '../outside/secret.txt', '--worlds-root', w.root]),
    felis(['list', '--op', 'list', '--worlds-root', w.root]),
    felis(['files', '--op', 'list', '--recursive', '--worlds-root', w.root]),
    felis(['files', '--worlds-root', w.root]),
    felis(['files', '--op', 'chmod', '--path', 'server.properties', '--worlds-root', w.root]),
    felis(['files', '--op', 'write', '--path', 'x', '--worlds-root', w.root, '--sha256', sha256('')], { FELIS_FILE_CONTENT_PARTS: '-1' }),
    felis(['files', '-op=read', '-path=config/paper.yml', `-worlds-root=${w.root}`]),
  ]);

  assert.equal(list.code, 0, list.stderr);
  const entries = resultOf(list)
    .entries!.map((e) => e.name)
    .sort();
  assert.deepEqual(entries, ['paper-global.yml', 'paper.yml']);

  assert.equal(read.code, 0);
  assert.match(Buffer.from(resultOf(read).content!, 'base64').toString(), /rcon.password=<redacted by felis>/);

  assert.equal(write.code, 0, write.stderr);
  assert.deepEqual(resultOf(write), { sha256: sha256(data) });
  assert.deepEqual(fs.readFileSync(w.p('plugins.txt')), data);

  assert.equal(missing.code, 0);
  assert.deepEqual(resultOf(missing), { code: 'not_found', error: 'missing.txt does not exist' });
  assert.equal(outside.code, 0);
  assert.equal(resultOf(outside).code, 'bad_path');

  for (const [run, re] of [
    [noFiles, /^felis: unknown command "list"\nusage: felis files/],
    [badFlag, /^felis files: flag provided but not defined: -recursive\n/],
    [noOp, /^felis files: --op is required\n$/],
    [badEnv, /^felis files: FELIS_FILE_CONTENT_PARTS is negative/],
  ] as [Run, RegExp][]) {
    assert.equal(run.code, 2, run.stderr);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, re);
  }
  assert.equal(fs.existsSync(w.p('x')), false);

  assert.equal(chmod.code, 1);
  assert.equal(chmod.stdout, '');
  assert.equal(chmod.stderr, 'felis files: unknown op "chmod"\n');

  assert.equal(singleDash.code, 0, singleDash.stderr);
  assert.equal(Buffer.from(resultOf(singleDash).content!, 'base64').toString(), 'paper: true\n');
});

test('end to end: files --serve answers on its address, and stops with one result line on SIGTERM and when idle', async () => {
  const { spawn } = await import('node:child_process');
  const { jobToken, tokenDigest } = await import('../lib/protocol/job-token.ts');
  const w = makeWorld();
  const token = jobToken(Buffer.alloc(32, 9), 'files-survival-bmain');
  const ip = `127.${10 + Math.floor(Math.random() * 200)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
  const serve = (extra: Record<string, string>) => {
    const child = spawn(NODE, [MAIN, 'files', '--serve', '--worlds-root', w.root], {
      env: { PATH: process.env.PATH ?? '', FELIS_POD_IP: ip, FELIS_SERVE_PORT: '0', FELIS_SERVE_TOKEN_SHA256: tokenDigest(token), ...extra },
      cwd: projectRoot,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    const listening = new Promise<number>((resolve, reject) => {
      child.stderr.on('data', (d) => {
        stderr += d;
        const m = /serving list and read on [\d.]+:(\d+)/.exec(stderr);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', () => reject(new Error(`exited before listening: ${stderr}`)));
    });
    const exited = new Promise<Run>((resolve) => child.once('exit', (code) => resolve({ code: code ?? -1, stdout, stderr })));
    return { child, listening, exited };
  };

  const a = serve({});
  const port = await a.listening;
  const res = await fetch(`http://${ip}:${port}/read?path=server.properties`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200);
  const viaServe = await res.text();
  const oneShot = await felis(['files', '--op', 'read', '--path', 'server.properties', '--worlds-root', w.root]);
  assert.equal(`${RESULT_PREFIX}${viaServe}\n`, oneShot.stdout, 'byte for byte the one-shot result line');
  a.child.kill('SIGTERM');
  const stopped = await a.exited;
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.deepEqual(resultOf(stopped), {});

  const b = serve({ FELIS_SERVE_IDLE_SECONDS: '1' });
  await b.listening;
  const idle = await b.exited;
  assert.equal(idle.code, 0, idle.stderr);
  assert.deepEqual(resultOf(idle), {});
  assert.match(idle.stderr, /stopped \(idle\) after 0 requests/);
});

test('a one-shot Job loads neither node:http nor node:child_process: only the serving modes and the volume sync need them', async () => {
  const w = makeWorld();
  // The program as a one-shot list, then which of the costly built-in modules the process loaded.
  const probe = [
    `import { runCli } from ${JSON.stringify(path.join(projectRoot, 'job/cli.ts'))};`,
    `await runCli(['files', '--op', 'list', '--path', 'config', '--worlds-root', ${JSON.stringify(w.root)}], {}, { stdout: () => {}, stderr: () => {} });`,
    // (node:net is left out: Node loads it by itself, for a piped stdout or its own start-up.)
    `const loaded = process.moduleLoadList.filter((m) => /^NativeModule (http|https|child_process)$/.test(m));`,
    `console.log(JSON.stringify(loaded));`,
  ].join('\n');
  const r = await new Promise<Run>((resolve) => {
    execFile(NODE, ['--input-type=module', '-e', probe], { cwd: projectRoot }, (err, stdout, stderr) => resolve({ code: err ? -1 : 0, stdout, stderr }));
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop()!), []);
});

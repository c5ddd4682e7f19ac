import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { encodeContentEnv } from '../lib/protocol/content-env.ts';
import { RESULT_PREFIX } from '../lib/protocol/result.ts';
import { parseResultPayload } from '../lib/protocol/result-parse.ts';
import { runCli } from './cli.ts';
import { errnoError, makeWorld, sha256 } from './testing/world.ts';

async function cli(argv: string[], env: Record<string, string | undefined> = {}, stdoutFails = false) {
  let out = '';
  let err = '';
  const code = await runCli(argv, env, {
    stdout: (t) => {
      if (stdoutFails) throw errnoError('EPIPE', 'broken pipe');
      out += t;
    },
    stderr: (t) => {
      err += t;
    },
  });
  return { code, out, err };
}

test('one result line, prefixed, exit 0 (also for a caller-fault result)', async () => {
  const w = makeWorld();
  const ok = await cli(['files', '--op', 'read', '--path', 'config/paper.yml', '--worlds-root', w.root]);
  assert.equal(ok.code, 0);
  assert.equal(ok.err, '');
  assert.ok(ok.out.startsWith(RESULT_PREFIX));
  assert.equal(ok.out.split('\n').length, 2);
  assert.equal(ok.out.at(-1), '\n');
  const r = parseResultPayload(ok.out.slice(RESULT_PREFIX.length).trimEnd());
  assert.equal(Buffer.from(r.content!, 'base64').toString(), 'paper: true\n');
  const nf = await cli(['files', '--op', 'read', '--path', 'nope', '--worlds-root', w.root]);
  assert.equal(nf.code, 0);
  assert.equal(nf.out, `${RESULT_PREFIX}{"code":"not_found","error":"nope does not exist"}\n`);
});

test('write takes its content from the env and only the write flags', async () => {
  const w = makeWorld();
  const data = Buffer.from([0, 1, 2, 0xff, 0x0a]);
  const env = Object.fromEntries(encodeContentEnv(data).map((v) => [v.name, v.value]));
  const r = await cli(['files', '--op', 'write', '--path', 'bin', '--worlds-root', w.root, '--sha256', sha256(data), '--create-only=false'], env);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, `${RESULT_PREFIX}{"sha256":"${sha256(data)}"}\n`);
  assert.deepEqual(fs.readFileSync(w.p('bin')), data);
  const again = await cli(['files', '--op', 'write', '--path', 'bin', '--worlds-root', w.root, '--sha256', sha256(data), '--create-only'], env);
  assert.equal(again.out, `${RESULT_PREFIX}{"code":"exists","error":"bin already exists"}\n`);
  // --to on a write and --create-only on a read are ignored.
  const read = await cli(['files', '--op', 'read', '--path', 'bin', '--create-only', '--to', 'x', '--worlds-root', w.root]);
  assert.equal(read.code, 0);
});

test('exit 2: wiring mistakes, with "felis files: <error>" on stderr and no result line', async () => {
  const w = makeWorld();
  const cases: [string[], Record<string, string>, RegExp][] = [
    [['files'], {}, /^felis files: --op is required\n$/],
    [['files', '--chmod', 'x'], {}, /^felis files: flag provided but not defined: -chmod\n/],
    [['files', '--op'], {}, /^felis files: flag needs an argument: -op\n/],
    [['files', '--op', 'write', '--path', 'x', '--worlds-root', w.root], { FELIS_FILE_CONTENT_PARTS: '0' }, /^felis files: --sha256 is required for write\n$/],
    [['files', '--op', 'write', '--path', 'x', '--worlds-root', w.root, '--sha256', 'ab'], {}, /^felis files: FELIS_FILE_CONTENT_PARTS is not set\n$/],
    [['files', '--op', 'write', '--path', 'x', '--worlds-root', w.root, '--sha256', 'ab'], { FELIS_FILE_CONTENT_PARTS: 'two' }, /^felis files: FELIS_FILE_CONTENT_PARTS is not an integer/],
    [
      ['files', '--op', 'write', '--path', 'x', '--worlds-root', w.root, '--sha256', 'ab'],
      { FELIS_FILE_CONTENT_PARTS: '1', FELIS_FILE_CONTENT_0: '@@@@' },
      /^felis files: the content is not valid base64\n$/,
    ],
    [['files', '--op', 'upload', '--path', 'x', '--worlds-root', w.root], { FELIS_UPLOAD_TOKEN: 't' }, /^felis files: --source-url is required for upload\n$/],
    [['files', '--op', 'upload', '--path', 'x', '--worlds-root', w.root, '--source-url', 'http://x'], {}, /^felis files: FELIS_UPLOAD_TOKEN is required for upload\n$/],
    [['files', '--op', 'pull-place', '--path', 'x', '--to', 'a.jar', '--worlds-root', w.root], {}, /^felis files: pull-place needs --pull-op \(16 lowercase hex digits\) and --to\n$/],
    [['files', '--op', 'pull-place', '--path', 'x', '--pull-op', '0123456789abcdef', '--worlds-root', w.root], {}, /^felis files: pull-place needs --pull-op/],
    [['files', '-h'], {}, /^usage: felis files/],
    [['backup', '--op', 'list'], {}, /^felis: unknown command "backup"\nusage: felis files/],
    // `export` is a command of its own now (job/export/), with its own flags.
    [['export', '--op', 'list'], {}, /^felis export: flag provided but not defined: -op\nusage: felis export/],
    [[], {}, /^felis: unknown command ""\nusage/],
  ];
  for (const [argv, env, re] of cases) {
    const r = await cli(argv, env);
    assert.equal(r.code, 2, argv.join(' '));
    assert.equal(r.out, '', argv.join(' '));
    assert.match(r.err, re, argv.join(' '));
  }
  assert.equal(fs.existsSync(w.p('x')), false);
});

test('exit 1: infrastructure failures, stderr "felis files: <error>", no result line', async () => {
  const w = makeWorld();
  const cases: [string[], Record<string, string>, RegExp][] = [
    [['files', '--op', 'chmod', '--path', 'server.properties', '--worlds-root', w.root], {}, /^felis files: unknown op "chmod"\n$/],
    [['files', '--op', 'upload', '--path', 'a', '--source-url', 'http://x', '--worlds-root', w.root], { FELIS_UPLOAD_TOKEN: 't' }, /^felis files: op "upload" is not supported/],
    [['files', '--op', 'list', '--worlds-root', `${w.base}/nope`], {}, /^felis files: open world root .*nope: ENOENT/],
    [['files', '--browse-url', 'http://x'], {}, /^felis files: browse mode is not supported/],
  ];
  for (const [argv, env, re] of cases) {
    const r = await cli(argv, env);
    assert.equal(r.code, 1, argv.join(' '));
    assert.equal(r.out, '', argv.join(' '));
    assert.match(r.err, re, argv.join(' '));
  }
  const broken = await cli(['files', '--op', 'list', '--worlds-root', w.root], {}, true);
  assert.equal(broken.code, 1);
  assert.match(broken.err, /^felis files: print result: EPIPE/);
});

test('zip and unzip from the command line: progress lines, then the one result line last; --to and --overwrite reach the op', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('world'));
  fs.writeFileSync(w.p('world/level.dat'), 'level');
  const z = await cli(['files', '--op', 'zip', '--path', 'world', '--to', 'w.zip', '--worlds-root', w.root]);
  assert.equal(z.code, 0, z.err);
  const zl = z.out.trimEnd().split('\n');
  assert.match(zl[0], /^FELIS-FILES-PROGRESS: \{"done":0,"total":5\}$/);
  assert.ok(zl.at(-1)!.startsWith(RESULT_PREFIX));
  assert.equal(parseResultPayload(zl.at(-1)!.slice(RESULT_PREFIX.length)).files, 1);
  fs.mkdirSync(w.p('copy'));
  const u = await cli(['files', '--op', 'unzip', '--path', 'w.zip', '--to', 'copy', '--worlds-root', w.root]);
  const ul = u.out.trimEnd().split('\n');
  assert.match(ul.at(-2)!, /^FELIS-FILES-PROGRESS: \{"done":5,"total":5\}$/);
  assert.equal(ul.at(-1), `${RESULT_PREFIX}{"files":1,"bytes":5}`);
  const again = await cli(['files', '--op', 'unzip', '--path', 'w.zip', '--to', 'copy', '--worlds-root', w.root]);
  assert.equal(parseResultPayload(again.out.trimEnd().split('\n').at(-1)!.slice(RESULT_PREFIX.length)).code, 'exists');
  const over = await cli(['files', '--op', 'unzip', '--path', 'w.zip', '--to', 'copy', '--overwrite', '--worlds-root', w.root]);
  assert.equal(over.out.trimEnd().split('\n').at(-1), `${RESULT_PREFIX}{"files":1,"bytes":5}`);
});

test("a listing's --limit, --after and --q reach the op; a --limit below 1 is a usage error (exit 2)", async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('d'));
  for (const n of ['c', 'a', 'B', 'b']) fs.writeFileSync(w.p(`d/${n}`), '');
  const page = await cli(['files', '--op', 'list', '--path', 'd', '--worlds-root', w.root, '--limit', '2', '--after', 'B']);
  assert.equal(page.code, 0, page.err);
  const r = parseResultPayload(page.out.slice(RESULT_PREFIX.length).trimEnd());
  assert.deepEqual([r.entries!.map((e) => e.name), r.truncated], [['a', 'b'], true]);
  const q = parseResultPayload((await cli(['files', '--op', 'list', '--path', 'd', '--worlds-root', w.root, '--q', 'B'])).out.slice(RESULT_PREFIX.length).trimEnd());
  assert.deepEqual(
    q.entries!.map((e) => e.name),
    ['B', 'b'],
  );
  const zero = await cli(['files', '--op', 'list', '--path', 'd', '--worlds-root', w.root, '--limit', '0']);
  assert.equal(zero.code, 2);
  assert.equal(zero.out, '');
  assert.match(zero.err, /--limit must be at least 1/);
});

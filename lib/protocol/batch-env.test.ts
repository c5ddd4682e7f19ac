import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Batch, BatchEnvError, commonFolder, decodeBatchEnv, encodeBatchEnv, MAX_BATCH_ENV_CHARS } from './batch-env.ts';

const envOf = (b: Batch) => Object.fromEntries(encodeBatchEnv(b)!.map((v) => [v.name, v.value]));

test('a batch travels gzipped in parts of at most 64 Ki characters, and comes back the same', () => {
  const paths = Array.from({ length: 1000 }, (_, i) => `world/playerdata/${i.toString(16).padStart(8, '0')}-0000-4000-8000-${'0'.repeat(12)}.dat`);
  const vars = encodeBatchEnv({ paths })!;
  assert.equal(vars[0]!.name, 'FELIS_BATCH_PARTS');
  assert.equal(Number(vars[0]!.value), vars.length - 1);
  assert.ok(vars.slice(1).every((v, i) => v.name === `FELIS_BATCH_${i}` && v.value.length <= 65536));
  // Paths repeat their folders: far smaller than the JSON.
  assert.ok(vars.slice(1).reduce((n, v) => n + v.value.length, 0) < JSON.stringify({ paths }).length / 3);
  assert.deepEqual(decodeBatchEnv('delete-many', envOf({ paths })), { paths });
  const moves = [{ from: 'a', to: 'b' }];
  assert.deepEqual(decodeBatchEnv('move-many', envOf({ moves })), { moves });
  const files = [{ path: 'a', mode: '755' }];
  assert.deepEqual(decodeBatchEnv('chmod-many', envOf({ files })), { files });
});

test('a batch that does not compress past MAX_BATCH_ENV_CHARS is not encoded', () => {
  const chars = Array.from({ length: 90 }, (_, i) => String.fromCharCode(36 + i));
  const seg = () => Array.from(crypto.getRandomValues(new Uint8Array(250)), (b) => chars[b % chars.length]).join('');
  const paths = Array.from({ length: 1000 }, () => [seg(), seg(), seg(), seg()].join('/'));
  assert.equal(encodeBatchEnv({ paths }), undefined);
  assert.ok(
    encodeBatchEnv({ paths: paths.slice(0, 500) })!
      .slice(1)
      .reduce((n, v) => n + v.value.length, 0) <= MAX_BATCH_ENV_CHARS,
  );
});

test("the Job refuses items that are missing or not its op's shape", () => {
  const bad: Array<[string, Record<string, string | undefined>]> = [
    ['no parts', {}],
    ['a missing part', { FELIS_BATCH_PARTS: '2', FELIS_BATCH_0: envOf({ paths: ['a'] }).FELIS_BATCH_0 }],
    ['not base64', { FELIS_BATCH_PARTS: '1', FELIS_BATCH_0: '!!!!' }],
    ['not gzip', { FELIS_BATCH_PARTS: '1', FELIS_BATCH_0: Buffer.from('{"paths":["a"]}').toString('base64') }],
    ['the wrong op', envOf({ moves: [{ from: 'a', to: 'b' }] })],
    ['no items', envOf({ paths: [] })],
    ['a number', envOf({ paths: [1 as unknown as string] })],
    ['1001 items', envOf({ paths: Array.from({ length: 1001 }, (_, i) => `f${i}`) })],
  ];
  for (const [what, env] of bad) assert.throws(() => decodeBatchEnv('delete-many', env), BatchEnvError, what);
  assert.throws(() => decodeBatchEnv('chmod-many', envOf({ files: [{ path: 'a', mode: '4755' }] })), BatchEnvError);
});

test('the Job is named for the folder every item lies in', () => {
  assert.equal(commonFolder({ paths: ['logs/a.log', 'logs/old/b.log'] }), 'logs');
  assert.equal(commonFolder({ paths: ['plugins/x/a', 'plugins/x/b'] }), 'plugins/x');
  assert.equal(commonFolder({ paths: ['a.txt', 'logs/b'] }), '.');
  assert.equal(commonFolder({ paths: ['logs/../x', 'logs/y'] }), '.');
  assert.equal(commonFolder({ moves: [{ from: 'w/a', to: 'w/old/a' }] }), 'w');
  assert.equal(commonFolder({ moves: [{ from: 'w/a', to: 'v/a' }] }), '.');
  assert.equal(commonFolder({ files: [{ path: './bin//run.sh', mode: '755' }] }), 'bin');
});

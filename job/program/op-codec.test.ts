import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type JobParams, renderFilesJob } from '../../lib/job-spec/render.ts';
import { CONTRACTS, contractOf, OPS, type Op, type OpFields } from '../../lib/protocol/ops.ts';
import { parseFlags } from './flags.ts';
import { SAMPLES as COLLECTED } from './op-samples.generated.test-kit.ts';

/**
 * Every op's samples, collected from its folder's op.test-kit.ts: keyed by every op, so declaring
 * an op without samples does not compile, and its codec is tested by declaring it.
 */
const SAMPLES: { [K in Op]: OpFields<K>[] } = COLLECTED;

/** The op's fields back from a command line, as the Job program reads them. */
function decoded(op: Op, argv: string[]): object {
  const parsed = parseFlags(argv);
  assert.equal(parsed.help, false);
  assert.deepEqual(parsed.rest, []);
  assert.equal(parsed.flags.op, op);
  assert.equal(parsed.flags.path, 'some/path');
  assert.equal(parsed.flags.worldsRoot, '/data');
  assert.equal(contractOf(op).refuse(parsed.flags), undefined, 'a command line the functions render is one the Job takes');
  return contractOf(op).decode(parsed.flags);
}

test('every op has one contract, and the op list is theirs in order', () => {
  assert.deepEqual(
    OPS,
    CONTRACTS.map((c) => c.name),
  );
  assert.equal(new Set(OPS).size, OPS.length);
  assert.deepEqual(Object.keys(SAMPLES).sort(), [...OPS].sort());
});

test("every op's flags round-trip: encoded by its contract, parsed as the Job does, decoded to the same fields", () => {
  for (const op of OPS) {
    for (const fields of SAMPLES[op]) {
      const argv = ['--op', op, '--path', 'some/path', '--worlds-root', '/data', ...contractOf(op).encode(fields)];
      assert.deepEqual(decoded(op, argv), fields, `${op} ${JSON.stringify(fields)}: ${argv.join(' ')}`);
    }
  }
});

/** What a Job of `op` needs beside its flags for the renderer to take it (its env's parts). */
function needs(op: Op): Partial<JobParams> {
  const c = contractOf(op);
  return {
    ...(c.traits.items === 'paths' ? { batch: { paths: ['a'] } } : {}),
    ...(c.traits.items === 'moves' ? { batch: { moves: [{ from: 'a', to: 'b' }] } } : {}),
    ...(c.traits.items === 'files' ? { batch: { files: [{ path: 'a', mode: '644' }] } } : {}),
    ...(op === 'upload' ? { uploadToken: 't' } : {}),
  };
}

test("a rendered Job's command line carries each op's fields to the Job program unchanged", () => {
  for (const op of OPS) {
    for (const fields of SAMPLES[op]) {
      const p: JobParams = {
        namespace: 'minecraft',
        server: 'survival',
        opId: '0123456789abcdef',
        op,
        path: 'some/path',
        worldPvc: 'world-survival-0',
        image: 'felis:dev',
        command: ['/usr/local/bin/felis', 'files'],
        serviceAccount: 'felis-restore',
        worldsRoot: '/data',
        deadlineSeconds: 120,
        ttlSeconds: 120,
        ...needs(op),
        ...fields,
      };
      const args = renderFilesJob(p).spec!.template.spec!.containers[0].args!;
      assert.deepEqual(decoded(op, args), fields, `${op} ${JSON.stringify(fields)}: ${args.join(' ')}`);
    }
  }
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { listening, worldRootOpens } from './start.ts';

function io() {
  const o = { err: '', stdout: () => {}, stderr: (t: string) => void (o.err += t) };
  return o;
}

test('the world root is opened before listening: a missing one is said on stderr', () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-start-'));
  try {
    const a = io();
    assert.equal(worldRootOpens(base, a, 'felis files: '), true);
    assert.equal(a.err, '');
    const b = io();
    assert.equal(worldRootOpens(path.join(base, 'nope'), b, 'felis files: '), false);
    assert.match(b.err, /^felis files: open world root .*nope: ENOENT/);
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
});

test('a listener that starts is given its stop on a signal; one that cannot start is said on stderr and gets none', async () => {
  const stops: string[] = [];
  const serving = { address: { address: '127.0.0.1', family: 'IPv4', port: 1 } as AddressInfo, stop: (r: 'signal') => void stops.push(r) };
  let handler: (() => void) | undefined;
  const a = io();
  assert.equal(
    await listening(
      async () => serving,
      'listen on x',
      a,
      'p: ',
      (stop) => (handler = stop),
    ),
    serving,
  );
  handler!();
  assert.deepEqual(stops, ['signal']);

  handler = undefined;
  const b = io();
  const failed = await listening(
    () => Promise.reject(new Error('EADDRINUSE')),
    'listen on 10.0.0.1:8420',
    b,
    'felis files: ',
    (stop) => (handler = stop),
  );
  assert.equal(failed, undefined);
  assert.equal(handler, undefined);
  assert.equal(b.err, 'felis files: listen on 10.0.0.1:8420: EADDRINUSE\n');
});

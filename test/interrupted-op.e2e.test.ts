/**
 * An extraction stopped mid-way (its Job killed, as a node crash would) is finished or undone by
 * the next op of the world, and the op listing then says which: the recovering Job names the op in
 * its log, and the listing shows it succeeded (every file placed) or `interrupted` (none placed),
 * instead of "outcome unknown". Both ways the record reaches the listing: a sync op's runner
 * annotates the interrupted op's Job; a background op's log is read by the listing itself.
 */

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { forgeZip } from '../job/archive/forge.test-kit.ts';
import { q, ROOT, type Stack, startStack, tierMs } from './support/stack.ts';

const CRASH_CHILD = join(ROOT, 'job/journal/crash-child.test-kit.ts');
const FILES = 40;
const OPS = '/api/v1/servers/survival/files/ops';

type Op = { id: string; op: string; state: string; error?: { code: string; message: string }; recovered?: { now: string; by: string; message: string } };

/** The unzip Pods run the Job program with a crash injected (crash-child.test-kit.ts's knobs); others the real one. */
const crashing = (knob: string) => (c: V1Container, pod: V1Pod) =>
  c.name === 'files' && pod.metadata?.labels?.['felis.lolicon.best/files-mode'] === 'unzip'
    ? { command: ['env', knob, process.execPath, CRASH_CHILD, ...(c.command ?? []).slice(1), ...(c.args ?? [])] }
    : undefined;

async function until(s: Stack, id: string, ok: (o: Op) => boolean): Promise<Op> {
  const end = Date.now() + tierMs(20_000);
  let last: Op | undefined;
  for (;;) {
    const r = await s.call('GET', OPS);
    assert.equal(r.status, 200, r.text);
    last = (r.body.ops as Op[]).find((o) => o.id === id);
    if (last && ok(last)) return last;
    if (Date.now() > end) throw new Error(`op ${id} never got there; last seen ${JSON.stringify(last)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

function placed(s: Stack, folder: string): string[] {
  const dir = join(s.world, folder);
  return existsSync(dir) ? readdirSync(dir).filter((n) => /^f\d+\.txt$/.test(n)) : [];
}

/** Until a mutation is not refused as busy (the killed Job's world lock is released by its end). */
async function mutate(s: Stack, method: string, path: string, body?: unknown) {
  const end = Date.now() + tierMs(20_000);
  for (;;) {
    const r = await s.call(method, path, body);
    if (r.status !== 409 || Date.now() > end) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}

describe('an extraction stopped mid-way, then the next op of the world', () => {
  let s: Stack;
  before(async () => {
    s = await startStack();
  });
  after(async () => {
    s.program = undefined;
    await s.close();
  });

  async function interruptedUnzip(folder: string, knob: string): Promise<string> {
    mkdirSync(join(s.world, folder), { recursive: true });
    const zip = forgeZip(Array.from({ length: FILES }, (_, i) => ({ name: `f${i}.txt`, data: Buffer.from(`file ${i}\n`) })));
    writeFileSync(join(s.world, folder, 'pack.zip'), zip);
    s.program = crashing(knob);
    const r = await mutate(s, 'POST', `/api/v1/servers/survival/files/unzip?path=${q(`${folder}/pack.zip`)}`, {});
    assert.equal(r.status, 202, r.text);
    const id = r.body.op.id as string;
    const failed = await until(s, id, (o) => o.state !== 'running');
    s.program = undefined;
    assert.equal(failed.error?.code, 'outcome_unknown', JSON.stringify(failed));
    return id;
  }

  test('killed mid-placement, finished by a sync op: every file is in place and the listing says it succeeded', async () => {
    // SIGKILL just before the 10th rename of the placement: 9 of 40 files placed, the rest staged.
    const id = await interruptedUnzip('forward', 'FELIS_TEST_KILL_RENAME=10');
    assert.ok(placed(s, 'forward').length < FILES, 'the kill came before the placement ended');
    const m = await mutate(s, 'POST', `/api/v1/servers/survival/files/mkdir?path=${q('after-forward')}`);
    assert.equal(m.status, 200, m.text);
    assert.equal(placed(s, 'forward').length, FILES);
    for (const n of placed(s, 'forward')) assert.equal(readFileSync(join(s.world, 'forward', n), 'utf8'), `file ${n.slice(1, -4)}\n`);
    const op = await until(s, id, (o) => o.state === 'succeeded');
    assert.equal(op.error, undefined);
    assert.equal(op.recovered?.now, 'new');
    assert.match(op.recovered!.by, /^[0-9a-f]{16}$/);
    assert.match(op.recovered!.message, /all of its files are in place/);
  });

  test('killed while staging, undone by a background op: nothing of it is placed, the listing says interrupted, and the re-run succeeds', async () => {
    // SIGKILL right after the journal's first step: staging, nothing placed.
    const id = await interruptedUnzip('back', 'FELIS_TEST_STOP_AT=1:KILL');
    assert.equal(placed(s, 'back').length, 0);
    const again = await mutate(s, 'POST', `/api/v1/servers/survival/files/unzip?path=${q('back/pack.zip')}`, {});
    assert.equal(again.status, 202, again.text);
    const rerun = await until(s, again.body.op.id, (o) => o.state !== 'running');
    assert.equal(rerun.state, 'succeeded', JSON.stringify(rerun));
    assert.equal(placed(s, 'back').length, FILES);
    const op = await until(s, id, (o) => o.error?.code === 'interrupted');
    assert.equal(op.state, 'failed');
    assert.deepEqual([op.recovered?.now, op.recovered?.by], ['old', again.body.op.id]);
    assert.match(op.error!.message, /none of its files are in the world, so it can be run again/);
  });
});

/**
 * A log followed end to end, on the embedded cluster (`npm test`) and the real control plane
 * (`npm run test:cluster`): `files/tail?follow=true` read with a real HTTP client as Server-Sent
 * Events — the last lines first, then lines appended to the log on the world volume, in order,
 * through a rotation (latest.log renamed away, a new one made and written); a resume with
 * `Last-Event-ID`; the third follow of a server refused with 429 while two run, and a hang-up
 * ending its follow Job so that another may start; three opened at once, one refused; hostile and missing paths refused as a tail
 * refuses them. Waits are bounded and generous (a busy 2-core machine); nothing is timed.
 */

import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BatchV1Api } from '@kubernetes/client-node';
import { jobFinished } from '../../lib/kube/job-facts.ts';
import { LABEL_FILES_FOLLOW } from '../../lib/labels.ts';
import { q, type Stack, startStack, TOKEN, tierMs } from '../../test/support/stack.ts';

const S = '/api/v1/servers/survival';

interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** Resolves `p`, or fails naming `what` after `ms`. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, no) => (timer = setTimeout(() => no(new Error(`no ${what} within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

/** A follow read as a browser's EventSource reads it: events split on blank lines, comments skipped. */
async function openFollow(s: Stack, query: string, headers: Record<string, string> = {}) {
  const ac = new AbortController();
  const res = await fetch(`${s.url}${S}/files/tail?${query}`, { headers: { authorization: `Bearer ${TOKEN}`, ...headers }, signal: ac.signal });
  // Taken on the first read, so that a refusal's body can still be read as text.
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const dec = new TextDecoder();
  let buf = '';
  const read = async (): Promise<SseEvent> => {
    for (;;) {
      const at = buf.indexOf('\n\n');
      if (at >= 0) {
        const block = buf.slice(0, at);
        buf = buf.slice(at + 2);
        const ev: SseEvent = { data: '' };
        let data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const [field, ...rest] = line.split(':');
          const value = rest.join(':').replace(/^ /, '');
          if (field === 'id') ev.id = value;
          else if (field === 'event') ev.event = value;
          else if (field === 'data') data = [...data, value];
        }
        if (ev.id === undefined && ev.event === undefined && data.length === 0) continue; // a keepalive
        ev.data = data.join('\n');
        return ev;
      }
      reader ??= res.body!.getReader();
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended');
      buf += dec.decode(value, { stream: true });
    }
  };
  return {
    res,
    next: (what: string) => within(read(), tierMs(60_000, 120_000), what),
    async lines(n: number, what: string): Promise<SseEvent[]> {
      const got: SseEvent[] = [];
      while (got.length < n) got.push(await this.next(`${what} (${got.length} of ${n} seen)`));
      return got;
    },
    close: () => ac.abort(),
  };
}

describe('files/tail?follow=true', () => {
  let s: Stack;
  const log = () => join(s.world, 'logs', 'latest.log');
  /** Waits (bounded) until every follow Job of the server has finished. */
  const followsEnded = async () => {
    const batch = s.cluster.kubeConfig(s.cluster.adminToken).makeApiClient(BatchV1Api);
    const deadline = Date.now() + tierMs(60_000, 180_000);
    for (;;) {
      const jobs = (await batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: `${LABEL_FILES_FOLLOW}=true` })).items;
      if (jobs.every(jobFinished)) return;
      assert.ok(Date.now() < deadline, 'a follow Job never ended');
      await new Promise((ok) => setTimeout(ok, 250));
    }
  };
  before(async () => {
    // A job key (browse's) is what follow tokens come from.
    s = await startStack({ browse: {} });
    mkdirSync(join(s.world, 'logs'), { recursive: true });
    writeFileSync(log(), 'boot 1\nboot 2\nboot 3\r\n');
  });
  after(async () => {
    await s?.close();
  });

  test('the last lines, then appended lines in order, through a rotation; a resume after an event id; the third follow is 429 while two run, and a hang-up frees its place', async () => {
    const a = await openFollow(s, `path=${q('logs/latest.log')}&follow=true&lines=2`);
    try {
      assert.equal(a.res.status, 200);
      assert.equal(a.res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      const tail = await a.lines(2, 'the tail');
      assert.deepEqual(
        tail.map((e) => e.data),
        ['boot 2', 'boot 3'],
        'the last 2 lines first, CRLF dropped',
      );
      assert.ok(
        tail.every((e) => /^\d+:\d+$/.test(e.id ?? '')),
        JSON.stringify(tail),
      );
      appendFileSync(log(), 'appended 1\nappended 2\n');
      const appended = await a.lines(2, 'the appended lines');
      assert.deepEqual(
        appended.map((e) => e.data),
        ['appended 1', 'appended 2'],
      );
      // Rotation: the game renames latest.log away and starts a new one.
      renameSync(log(), join(s.world, 'logs', '2026-12-07-1.log'));
      writeFileSync(log(), 'rotated 1\n');
      appendFileSync(log(), 'rotated 2\n');
      const rotated = await a.lines(2, 'the lines of the new latest.log');
      assert.deepEqual(
        rotated.map((e) => e.data),
        ['rotated 1', 'rotated 2'],
      );
      assert.notEqual(rotated[0]!.id!.split(':')[0], appended[0]!.id!.split(':')[0], 'another file, another inode');

      // A resume after `rotated 1`: only what came after it, no tail.
      const b = await openFollow(s, `path=${q('logs/latest.log')}&follow=true`, { 'last-event-id': rotated[0]!.id! });
      try {
        assert.equal(b.res.status, 200);
        assert.equal((await b.next('the resumed line')).data, 'rotated 2');

        // Two follows run: a third is refused, before any Job.
        const third = await s.call('GET', `${S}/files/tail?path=${q('logs/latest.log')}&follow=true`);
        assert.equal(third.status, 429, third.text);
        assert.equal(third.body.error.code, 'follow_limit');
        assert.match(third.headers.get('retry-after') ?? '', /^\d+$/);

        appendFileSync(log(), 'both see it\n');
        assert.equal((await a.next('the shared line, first follow')).data, 'both see it');
        assert.equal((await b.next('the shared line, second follow')).data, 'both see it');
      } finally {
        b.close();
      }
      // The hang-up ends b's Job: once it has finished, a follow is admitted again.
      const deadline = Date.now() + tierMs(60_000, 180_000);
      let c: Awaited<ReturnType<typeof openFollow>> | undefined;
      while (!c) {
        const tryIt = await openFollow(s, `path=${q('logs/latest.log')}&follow=true&lines=1`);
        if (tryIt.res.status === 200) c = tryIt;
        else {
          assert.equal(tryIt.res.status, 429);
          tryIt.close();
          assert.ok(Date.now() < deadline, 'the hung-up follow never ended');
          await new Promise((ok) => setTimeout(ok, 250));
        }
      }
      try {
        assert.equal((await c.next('the tail of the new follow')).data, 'both see it');
      } finally {
        c.close();
      }
    } finally {
      a.close();
    }
  });

  test('a missing file, a folder, the withheld file and paths leading out are refused as the tail refuses them; a bad follow is 400', async () => {
    // The follows of the test before may still be ending: wait for room (bounded), then check each refusal.
    const refused = async (path: string) => {
      const deadline = Date.now() + tierMs(60_000, 180_000);
      for (;;) {
        const r = await s.call('GET', `${S}/files/tail?path=${q(path)}&follow=true`);
        if (r.status !== 429 || Date.now() > deadline) return r;
        await new Promise((ok) => setTimeout(ok, 250));
      }
    };
    const missing = await refused('logs/nope.log');
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.body.error.code, 'not_found');
    for (const p of ['logs', 'config/paper-global.yml', '../etc/passwd', 'server.properties']) {
      const r = await refused(p);
      assert.equal(r.status, 400, `${p}: ${r.text}`);
      assert.equal(r.body.error.code, 'bad_path', p);
    }
    const bad = await s.call('GET', `${S}/files/tail?path=${q('logs/latest.log')}&follow=yes`);
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.error.code, 'bad_request');
  });
  test('three follows opened at once: two stream, the third is 429 (the count is taken again once the Jobs serve)', async () => {
    // Every follow of the tests before has ended (its Job finished), so the three start from none.
    await followsEnded();
    // Each on a connection of its own, closed after its answer (node:http without an agent).
    const opened = await Promise.all(
      [1, 2, 3].map(
        () =>
          new Promise<http.IncomingMessage>((ok, no) =>
            http.get(`${s.url}${S}/files/tail?path=${q('logs/latest.log')}&follow=true&lines=1`, { agent: false, headers: { authorization: `Bearer ${TOKEN}` } }, ok).once('error', no),
          ),
      ),
    );
    try {
      assert.deepEqual(opened.map((r) => r.statusCode).sort(), [200, 200, 429]);
      const refused = opened.find((r) => r.statusCode === 429)!;
      let text = '';
      for await (const chunk of refused) text += chunk;
      assert.equal(JSON.parse(text).error.code, 'follow_limit');
      for (const r of opened.filter((x) => x.statusCode === 200)) {
        let got = '';
        for await (const chunk of r) {
          got += chunk;
          if (got.includes('\n\n')) break;
        }
        assert.match(got, /^id: \d+:\d+\ndata: /, 'the tail of a kept follow');
      }
    } finally {
      for (const r of opened) r.destroy();
    }
    // The hang-ups end their Jobs.
    await followsEnded();
  });
});

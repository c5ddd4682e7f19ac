import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';
import { Lifecycle } from './lifecycle.ts';
import { listenOn } from './listen.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function harness(o: { idleMs: number; lifetimeMs?: number; graceMs?: number }) {
  const server = http.createServer((_req, res) => res.end('ok'));
  const events: string[] = [];
  let done!: (reason: string) => void;
  const stopped = new Promise<string>((r) => (done = r));
  const life = new Lifecycle<'done'>(server, {
    idleMs: o.idleMs,
    lifetimeMs: o.lifetimeMs,
    graceMs: o.graceMs ?? 50,
    onStop: (reason) => events.push(`stop ${reason}`),
    onStopped: (reason) => {
      events.push(`stopped ${reason}`);
      done(reason);
    },
  });
  return { server, life, events, stopped };
}

test('nothing in hand for the idle period stops it; something in hand holds the idle stop off', async () => {
  const h = harness({ idleMs: 60 });
  await listenOn(h.server, 0, '127.0.0.1');
  h.life.armIdle();
  h.life.holdIdle();
  await sleep(150);
  assert.equal(h.life.stopping, undefined, 'held: no idle stop');
  h.life.armIdle();
  assert.equal(await h.stopped, 'idle');
  assert.deepEqual(h.events, ['stop idle', 'stopped idle']);
});

test('the lifetime stops it whatever is in hand, and a stop happens once', async () => {
  const h = harness({ idleMs: 60_000, lifetimeMs: 60 });
  await listenOn(h.server, 0, '127.0.0.1');
  h.life.holdIdle();
  assert.equal(await h.stopped, 'lifetime');
  h.life.stop('done');
  h.life.armIdle();
  await sleep(20);
  assert.deepEqual(h.events, ['stop lifetime', 'stopped lifetime'], 'later stops and arming change nothing');
});

test('a connection still open at the stop is cut after the grace; the stop then completes', async () => {
  const h = harness({ idleMs: 60_000, graceMs: 100 });
  const addr = await listenOn(h.server, 0, '127.0.0.1');
  // A request whose head never ends: the connection is neither idle nor answered.
  const sock = net.connect(addr.port, addr.address);
  await new Promise((r) => sock.once('connect', r));
  sock.write('GET / HTTP/1.1\r\nHost: x\r\n');
  await sleep(30);
  const closed = new Promise((r) => sock.once('close', r));
  const t = performance.now();
  h.life.stop('done');
  assert.equal(h.life.stopping, 'done');
  assert.equal(await h.stopped, 'done');
  await closed;
  assert.ok(performance.now() - t >= 90, 'not cut before the grace');
});

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

const MODULE = new URL('./external-memory.ts', import.meta.url).pathname;

/**
 * A process shaped like a function mid-download: a heap of about 60 MiB that stays alive (the
 * Kubernetes client's), and 384 MiB streamed through a loopback socket in 64 KiB writes. Prints
 * how many full (mark-compact) collections ran while the bytes went through.
 */
const CHILD = `
import net from 'node:net';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { countExternalMemoryInHeapLimit } from ${JSON.stringify(MODULE)};
if (process.argv[1] === 'on') countExternalMemoryInHeapLimit();
globalThis.held = Array.from({ length: 400000 }, (_, i) => ({ i, s: 'x' + i, a: [i, i + 1] }));
let major = 0;
new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++; }).observe({ entryTypes: ['gc'] });
const TOTAL = 384 << 20;
const server = net.createServer((s) => {
  let sent = 0;
  const pump = () => { while (sent < TOTAL) { sent += 65536; if (!s.write(Buffer.alloc(65536))) return void s.once('drain', pump); } s.end(); };
  pump();
}).listen(0, '127.0.0.1', () => {
  let got = 0;
  const c = net.connect(server.address().port, '127.0.0.1');
  c.on('data', (d) => (got += d.length));
  c.on('end', () => { setImmediate(() => { console.log(JSON.stringify({ got, major })); server.close(); }); });
});
`;

async function streamThrough(mode: 'on' | 'off'): Promise<{ got: number; major: number }> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', CHILD, mode], { encoding: 'utf8' });
  return JSON.parse(stdout) as { got: number; major: number };
}

test('streamed bytes set off no full collections of a large heap once external memory counts in its limit', async () => {
  const off = await streamThrough('off');
  const on = await streamThrough('on');
  assert.equal(off.got, 384 << 20);
  assert.equal(on.got, 384 << 20);
  // Without it V8 marks the whole heap every few dozen MiB of buffers; with it, the buffers go
  // with the young generation. (If a Node upgrade changes either side, the reasoning in
  // external-memory.ts needs a new look.)
  assert.ok(off.major >= 4, `without the flag: ${off.major} full collections`);
  assert.ok(on.major <= 1, `with the flag: ${on.major} full collections`);
});

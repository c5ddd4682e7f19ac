/**
 * `node bench/request-tally.ts [--unscheduled MS] [--creating MS]`: the Kubernetes API requests of
 * one whole sync read (GET file) and one whole write (PUT file) on a warm instance, by verb: the
 * gates, the admission lock, the runner, the release. For information (not in `npm run bench`):
 * the runner's share moves with the Pod timing, the rest does not. The embedded cluster, every Pod
 * unscheduled then ContainerCreating for the given times (default 275 and 1400 ms: the medians of
 * the sync bench's draws); three reads and writes first, so connections and learning are warm.
 */
import { createHash } from 'node:crypto';
import { FUNCTION_USER, startStack } from '../test/support/stack.ts';
import { numberArg } from './support.ts';

const argv = process.argv.slice(2);
const timing = { unscheduledMs: numberArg(argv, '--unscheduled', 275), creatingMs: numberArg(argv, '--creating', 1400) };
const sha = (b: string) => createHash('sha256').update(b).digest('hex');
const s = await startStack({ editor: { timeoutMs: 30_000 } });
try {
  s.cluster.faults.pod('felis.lolicon.best/files-op', timing);
  const read = () => s.call('GET', '/api/v1/servers/survival/file?path=eula.txt');
  const write = (n: number) => {
    const text = `tally ${n}\n`;
    return s.call('PUT', '/api/v1/servers/survival/file?path=tally.txt', { content: Buffer.from(text).toString('base64'), content_sha256: sha(text) });
  };
  for (let i = 0; i < 3; i++) {
    if ((await read()).status !== 200 || (await write(i)).status !== 200) throw new Error('warm-up failed');
  }
  const tally = async (what: string, call: () => Promise<{ status: number; text: string }>) => {
    s.cluster.resetCounts();
    const r = await call();
    if (r.status !== 200) throw new Error(`${what}: ${r.status} ${r.text}`);
    const counts = s.cluster.counts(FUNCTION_USER);
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    console.log(`${what}: ${total} requests ${JSON.stringify(counts)}`);
  };
  console.log(`Pods unscheduled ${timing.unscheduledMs} ms, then ContainerCreating ${timing.creatingMs} ms`);
  await tally('read', read);
  await tally('write', () => write(99));
} finally {
  s.cluster.faults.clear();
  await s.close();
}

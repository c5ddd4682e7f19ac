/**
 * The floor under a pull in Node: `http.get` of the URL, its chunks written to a new file with
 * batched synchronous writes, then one fsync. No guard, no progress, no name checks, no background
 * syncs; run with the pull Job's NODE_OPTIONS by bench/pull.bench.ts. What remains between this
 * and `curl` is the runtime's (a buffer allocated per socket read, and the collections they cause)
 * and the durability (the fsync), not the pull's code.
 *
 * With `--discard` the chunks are only counted, nothing is written: what Node's HTTP client alone
 * costs to receive the bytes, the floor under any Node pull however it writes.
 *
 * `node bench/pull-floor.ts <url> <file>` or `node bench/pull-floor.ts --discard <url>`
 */
import fs from 'node:fs';
import http from 'node:http';

const discard = process.argv[2] === '--discard';
const [url, file] = process.argv.slice(discard ? 3 : 2);
const res = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(url, resolve).once('error', reject));
if (discard) {
  let received = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) received += chunk.length;
  process.stdout.write(`${received}\n`);
  process.exit(0);
}
const fd = fs.openSync(file, 'wx');
let parts: Buffer[] = [];
let size = 0;
for await (const chunk of res as AsyncIterable<Buffer>) {
  parts.push(chunk);
  size += chunk.length;
  if (size >= 1 << 20) {
    if (fs.writevSync(fd, parts) !== size) throw new Error('a short write');
    parts = [];
    size = 0;
  }
}
if (parts.length > 0 && fs.writevSync(fd, parts) !== size) throw new Error('a short write');
fs.fsyncSync(fd);
fs.closeSync(fd);

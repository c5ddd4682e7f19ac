/**
 * `node bench/files-nbt.bench.ts [--json] [--runs N]`: files/nbt's codec on a level.dat-shaped
 * document of about 1 MiB of NBT (the fixture's level.dat with thousands of game rules), gzip as
 * the game stores it, beside a plain gunzip of the same file, the reference: the read's work in
 * its Job (gunzip, decode, the JSON text of the answer) and the write's in the function (parse the
 * JSON body, encode, gzip). The medians and their ratios to the gunzip are reported; each run's
 * encoding must be the file's payload byte for byte.
 */
import { gunzipSync } from 'node:zlib';
import { fileOf, levelDoc, payloadOf } from '../functions/files-nbt/fixtures.test-kit.ts';
import { decodeNbt, payloadOf as inflate } from '../functions/files-nbt/job/nbt-decode.ts';
import { compressNbt, encodeNbt } from '../functions/files-nbt/nbt-encode.ts';
import { median, numberArg } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const RUNS = numberArg(argv, '--runs', 15);
const log = (s: string) => (asJson ? process.stderr : process.stdout).write(`${s}\n`);
const r2 = (x: number) => Math.round(x * 100) / 100;

// About 1 MiB of NBT: game rules of some 50 bytes each.
const payload = payloadOf(levelDoc(20_000));
const file = fileOf(payload, 'gzip');
log(`files/nbt's codec on ${payload.length} bytes of NBT (${file.length} gzip), ${RUNS} runs`);

const gunzipMs: number[] = [];
const readMs: number[] = [];
const writeMs: number[] = [];
let jsonChars = 0;
for (let i = 0; i < RUNS + 2; i++) {
  let t = performance.now();
  gunzipSync(file);
  const g = performance.now() - t;
  t = performance.now();
  const json = JSON.stringify(decodeNbt(inflate(file, 'gzip')));
  const rd = performance.now() - t;
  jsonChars = json.length;
  t = performance.now();
  const encoded = encodeNbt(JSON.parse(json));
  compressNbt(encoded, 'gzip');
  const wr = performance.now() - t;
  if (!encoded.equals(payload)) throw new Error('the encoding is not the payload');
  // The first two runs warm the code up.
  if (i < 2) continue;
  gunzipMs.push(g);
  readMs.push(rd);
  writeMs.push(wr);
}

const out = {
  nbt_gunzip_ms_p50_1mib: r2(median(gunzipMs)),
  nbt_read_ms_p50_1mib: r2(median(readMs)),
  nbt_write_ms_p50_1mib: r2(median(writeMs)),
  nbt_read_vs_gunzip_ratio_1mib: r2(median(readMs) / median(gunzipMs)),
  nbt_write_vs_gunzip_ratio_1mib: r2(median(writeMs) / median(gunzipMs)),
};
if (asJson) {
  console.log(JSON.stringify(out));
} else {
  console.log(`  gunzip (the reference)             p50 ${out.nbt_gunzip_ms_p50_1mib} ms`);
  console.log(`  read: gunzip, decode, JSON text    p50 ${out.nbt_read_ms_p50_1mib} ms (${out.nbt_read_vs_gunzip_ratio_1mib}x; ${jsonChars} characters of JSON)`);
  console.log(`  write: JSON.parse, encode, gzip    p50 ${out.nbt_write_ms_p50_1mib} ms (${out.nbt_write_vs_gunzip_ratio_1mib}x)`);
}

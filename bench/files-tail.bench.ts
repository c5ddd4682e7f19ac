/**
 * `node bench/files-tail.bench.ts [--json] [--runs N] [--mib N]`: the tail op's backward line
 * reader (functions/files-tail/job/last-lines.ts, with the op's bounds) taking the last 1000
 * lines of a `--mib` MiB log (default 200; lines of a Minecraft log's length) beside
 * `tail -n 1000` on the same file, made under the system's temp folder and removed after.
 * Both are run once to warm the page cache, then interleaved N times (default 9); the medians and
 * their ratio are reported (the reader's time is taken in this process, tail's whole run). Each
 * run's lines must be tail's.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lastLines } from '../functions/files-tail/job/last-lines.ts';
import { TAIL_MAX_LINE, TAIL_MAX_SCAN } from '../functions/files-tail/op.ts';
import { median, numberArg } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const RUNS = numberArg(argv, '--runs', 9);
const MIB = numberArg(argv, '--mib', 200);
const LINES = 1000;
const log = (s: string) => (asJson ? process.stderr : process.stdout).write(`${s}\n`);
const r2 = (x: number) => Math.round(x * 100) / 100;

/** A log of `mib` MiB: lines of 60 to 180 bytes, as a server's are. */
function makeLog(file: string, mib: number): void {
  const fd = fs.openSync(file, 'w');
  try {
    const chunk: string[] = [];
    let size = 0;
    for (let i = 0; size < mib << 20; i++) {
      const line = `[12:${String(i % 60).padStart(2, '0')}:00] [Server thread/INFO]: Player${i % 97} moved ${'.'.repeat(i % 120)} ${i}\n`;
      chunk.push(line);
      size += line.length;
      if (chunk.length === 10_000) fs.writeSync(fd, chunk.splice(0).join(''));
    }
    fs.writeSync(fd, chunk.join(''));
  } finally {
    fs.closeSync(fd);
  }
}

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-tail-bench-'));
const ours: number[] = [];
const theirs: number[] = [];
try {
  const file = path.join(base, 'latest.log');
  makeLog(file, MIB);
  const read = () => {
    const t0 = performance.now();
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const r = lastLines((buf, len, pos) => fs.readSync(fd, buf, 0, len, pos), size, { lines: LINES, maxScan: TAIL_MAX_SCAN, maxLine: TAIL_MAX_LINE });
      return { ms: performance.now() - t0, lines: r.lines };
    } finally {
      fs.closeSync(fd);
    }
  };
  const tail = () => {
    const t0 = performance.now();
    const out = execFileSync('tail', ['-n', String(LINES), file], { encoding: 'utf8' });
    return { ms: performance.now() - t0, lines: out.split('\n').slice(0, -1) };
  };
  read();
  tail();
  for (let i = 0; i < RUNS; i++) {
    const a = read();
    const b = tail();
    if (a.lines.length !== LINES || a.lines.join('\n') !== b.lines.join('\n')) throw new Error('the reader and tail -n disagree');
    ours.push(a.ms);
    theirs.push(b.ms);
  }
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}

const out = {
  [`tail_ms_p50_${MIB}mib`]: r2(median(ours)),
  [`tail_n_ms_p50_${MIB}mib`]: r2(median(theirs)),
  [`tail_vs_tail_n_ratio_${MIB}mib`]: r2(median(ours) / median(theirs)),
};
if (asJson) console.log(JSON.stringify(out));
else {
  log(`files/tail's reader, the last ${LINES} lines of a ${MIB} MiB log, ${RUNS} runs beside tail -n ${LINES}, interleaved`);
  log(`  the reader (in process)  p50 ${out[`tail_ms_p50_${MIB}mib`]} ms`);
  log(`  tail -n ${LINES} (a process)  p50 ${out[`tail_n_ms_p50_${MIB}mib`]} ms`);
  log(`  ratio                    ${out[`tail_vs_tail_n_ratio_${MIB}mib`]}x`);
}

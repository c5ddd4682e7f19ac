/**
 * `node bench/transfer-ratio.bench.ts [--json] [--runs N] [--mib N]`: our 1 GiB download and
 * upload against the loopback floor of the same shape, measured in one run, interleaved. Each of
 * N rounds (default 3) runs the floor (bench/transfer-floor.py: a download through a `splice`
 * relay from a `sendfile` server, an upload through a `splice` relay to a receiver that hashes
 * every byte twice) and one timed run of the download and upload benches, alternating which goes
 * first, so a busy moment skews both alike. Each round also times bare Node relays of the
 * download's and the upload's shape (bench/node-relay-floor.ts: no splice or sendfile, as no Node
 * program has them), for `download_ratio_vs_node_floor` and `upload_ratio_vs_node_floor`. Each
 * round's ratio is ours over the floor's MiB/s;
 * the keys are the medians. Peak RSS is the highest the download and upload benches saw.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { median, numberArg } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const RUNS = numberArg(argv, '--runs', 3);
const MIB = numberArg(argv, '--mib', 1024);
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;

/** Runs a bench that prints one JSON line last; returns that object. */
async function json(cmd: string, args: string[]): Promise<Record<string, number>> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`${args[0]} exited ${code}`);
  return JSON.parse(out.trim().split('\n').pop()!);
}

const floor = async () => ({
  ...(await json('python3', [here('transfer-floor.py'), '--json', '--runs', '1', '--mib', String(MIB), '--cases', 'download_relayed,upload_relayed_hashed'])),
  ...(await json(process.execPath, [here('node-relay-floor.ts'), '--json', '--runs', '1', '--mib', String(MIB)])),
});
const ours = async () => ({
  ...(await json(process.execPath, [here('download.bench.ts'), '--json', '--runs', '1', '--mib', String(MIB)])),
  ...(await json(process.execPath, [here('upload.bench.ts'), '--json', '--runs', '1', '--size-mib', String(MIB)])),
});

const t = performance.now();
const rounds: { floor: Record<string, number>; ours: Record<string, number> }[] = [];
for (let i = 0; i < RUNS; i++) {
  let f: Record<string, number>;
  let o: Record<string, number>;
  if (i % 2 === 0) {
    f = await floor();
    o = await ours();
  } else {
    o = await ours();
    f = await floor();
  }
  rounds.push({ floor: f, ours: o });
  if (!asJson) process.stderr.write('.');
}

const med = (pick: (r: (typeof rounds)[number]) => number) => median(rounds.map(pick));
const max = (key: string) => Math.max(...rounds.map((r) => r.ours[key] ?? 0));
const out = {
  download_ratio_vs_floor: r2(med((r) => r.ours.download_mib_s! / r.floor.download_relayed_mib_s!)),
  upload_ratio_vs_floor: r2(med((r) => r.ours.upload_mib_s! / r.floor.upload_relayed_hashed_mib_s!)),
  download_ratio_vs_node_floor: r2(med((r) => r.ours.download_mib_s! / r.floor.download_node_relay_mib_s!)),
  upload_ratio_vs_node_floor: r2(med((r) => r.ours.upload_mib_s! / r.floor.upload_node_relay_mib_s!)),
  ratio_download_mib_s: r1(med((r) => r.ours.download_mib_s!)),
  ratio_download_node_floor_mib_s: r1(med((r) => r.floor.download_node_relay_mib_s!)),
  ratio_download_floor_mib_s: r1(med((r) => r.floor.download_relayed_mib_s!)),
  ratio_upload_mib_s: r1(med((r) => r.ours.upload_mib_s!)),
  ratio_upload_floor_mib_s: r1(med((r) => r.floor.upload_relayed_hashed_mib_s!)),
  ratio_upload_node_floor_mib_s: r1(med((r) => r.floor.upload_node_relay_mib_s!)),
  ratio_download_fn_peak_rss_mib: max('download_fn_peak_rss_mib'),
  ratio_download_pod_peak_rss_mib: max('download_pod_peak_rss_mib'),
  ratio_upload_fn_peak_rss_mib: max('upload_fn_peak_rss_mib'),
  ratio_upload_pod_peak_rss_mib: max('upload_pod_peak_rss_mib'),
  ratio_mib: MIB,
  ratio_rounds: RUNS,
};
if (asJson) console.log(JSON.stringify(out));
else {
  process.stderr.write('\n');
  console.log(`transfers against their floor, ${MIB} MiB, ${RUNS} rounds, interleaved (${r1((performance.now() - t) / 1000)} s in all)`);
  console.log(`  download: ours ${out.ratio_download_mib_s} MiB/s, floor (splice relay) ${out.ratio_download_floor_mib_s} MiB/s, ratio ${out.download_ratio_vs_floor} (target >= 0.8)`);
  console.log(`            a bare Node relay of the same shape ${out.ratio_download_node_floor_mib_s} MiB/s, ratio ${out.download_ratio_vs_node_floor}`);
  console.log(`  upload:   ours ${out.ratio_upload_mib_s} MiB/s, floor (splice relay, two digests) ${out.ratio_upload_floor_mib_s} MiB/s, ratio ${out.upload_ratio_vs_floor} (target >= 0.8)`);
  console.log(`            a bare Node relay of the same shape (one request, two digests, fdatasync) ${out.ratio_upload_node_floor_mib_s} MiB/s, ratio ${out.upload_ratio_vs_node_floor}`);
  console.log(
    `  peak RSS: download function ${out.ratio_download_fn_peak_rss_mib} MiB, export Job ${out.ratio_download_pod_peak_rss_mib} MiB; upload function ${out.ratio_upload_fn_peak_rss_mib} MiB, receiver ${out.ratio_upload_pod_peak_rss_mib} MiB`,
  );
}

/**
 * `node bench/download.bench.ts [--json] [--runs N] [--mib N] [--node-client]`: a download of one
 * large file (1 GiB by default) through the files-download function, end to end: sign the URL, GET
 * it with curl (or Node's http), and write what arrives to a file on the same disk; against `cp`
 * of the same file on the same disk. The
 * embedded cluster runs in this process, the function bundle in its own process (as a Knative
 * instance would), and the export Job's program in its own, as the kubelet runs it. Runs are
 * interleaved, so a busy machine skews both alike; each is timed from the request (or cp's spawn)
 * to the last byte written. The first download is checked against the file's SHA-256. With curl,
 * `curl_file_mib_s` is curl copying the same file from a `file://` URL to the same place: what the
 * client itself reaches with no network and no server, so no download through it can be faster.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, rmSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { cpuSeconds, highestPeak, watchChildren } from './proc-watch.ts';
import { BENCH_TOKEN, curlClient, median, numberArg, startBenchStack, writeRandomFile } from './support.ts';

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const RUNS = numberArg(argv, '--runs', 3);
const MIB = numberArg(argv, '--mib', 1024);
const execFileAsync = promisify(execFile);
const CURL = curlClient(argv);
const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;

const sha256File = async (path: string) => {
  const h = createHash('sha256');
  await pipeline(createReadStream(path), h);
  return h.digest('hex');
};

const t = performance.now();
const stack = await startBenchStack('download');
const { cluster } = stack;
const big = join(stack.world, 'big.bin');
const bytes = MIB << 20;
const download: number[] = [];
const cp: number[] = [];
const curlFile: number[] = [];
const target = join(stack.dataDir, 'received.bin');
/** Request to response headers: the export Job's creation and its Pod's start. */
const starts: number[] = [];
/** Peak RSS (MiB) of the function's process and of the export Jobs' programs over the timed downloads. */
let fnPeak = 0;
let podPeak = 0;
/** CPU seconds per timed download: the function's, the export Job's. */
const fnCpu: number[] = [];
const podCpu: number[] = [];
try {
  writeRandomFile(big, MIB << 20);
  const fn = await stack.startFunction('files-download', { ...stack.env, FELIS_JOB_KEY_FILE: stack.keyFile });
  const expected = await sha256File(big);

  const downloadOnce = async (): Promise<number> => {
    const s = await fetch(`${fn.url}/api/v1/servers/survival/files/download?path=big.bin`, { method: 'POST', headers: { authorization: `Bearer ${BENCH_TOKEN}` } });
    const signed = (await s.json()) as { url: string };
    if (s.status !== 200) throw new Error(`sign: ${s.status} ${JSON.stringify(signed)}`);
    // The signed URL is origin-relative (no FELIS_DOWNLOAD_BASE_URL here): the panel resolves it against the API it called.
    signed.url = new URL(signed.url, fn.url).href;
    // The client is curl when there is one (a native client, as a browser is), else Node's http;
    // either writes what arrives to a file on the same disk.
    const t0 = performance.now();
    if (CURL) {
      // Not execFileSync: the embedded cluster runs in this process and must keep answering.
      const w = (await execFileAsync('curl', ['-sS', '--fail', '-o', target, '-w', '%{time_starttransfer} %{size_download}', signed.url])).stdout.split(' ');
      starts.push(Number(w[0]) * 1000);
      if (Number(w[1]) !== bytes) throw new Error(`download cut off: ${w[1]} of ${bytes} bytes; the function's log:\n${fn.output().slice(-4000)}`);
      return performance.now() - t0;
    }
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(signed.url, resolve).once('error', reject));
    if (res.statusCode !== 200) throw new Error(`download: ${res.statusCode}`);
    starts.push(performance.now() - t0);
    try {
      await pipeline(res, createWriteStream(target, { highWaterMark: 1 << 20 }));
    } catch (err) {
      await new Promise((r) => setTimeout(r, 1000));
      const core = cluster.kubeConfig(cluster.adminToken).makeApiClient(CoreV1Api);
      for (const p of (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: 'app.kubernetes.io/managed-by=felis-export' })).items) {
        const log = await core.readNamespacedPodLog({ namespace: 'minecraft', name: p.metadata!.name!, container: 'files' }).catch((e) => String(e));
        console.error(p.metadata!.name, p.status?.phase, JSON.stringify(p.status?.containerStatuses?.[0]?.state), log);
      }
      throw new Error(`download cut off after ${Math.round(performance.now() - t0)} ms: ${String(err)}; the function's log:\n${fn.output().slice(-4000)}`);
    }
    return performance.now() - t0;
  };
  /** curl copying the file to the same place with no network at all: the client's own ceiling. */
  const curlFileOnce = async (): Promise<number> => {
    const t0 = performance.now();
    await execFileAsync('curl', ['-sS', '-o', target, `file://${big}`]);
    return performance.now() - t0;
  };
  const cpOnce = (): number => {
    const t0 = performance.now();
    execFileSync('cp', [big, target]);
    return performance.now() - t0;
  };

  // Warm-up, and the check that what arrives is the file.
  await downloadOnce();
  if ((await sha256File(target)) !== expected) throw new Error('the downloaded file differs from the original');
  cpOnce();
  for (let i = 0; i < RUNS; i++) {
    const watch = watchChildren();
    download.push(await downloadOnce());
    const seen = watch.stop();
    const fnPids = new Set([fn.child.pid!]);
    fnPeak = Math.max(fnPeak, highestPeak(seen, fnPids));
    podPeak = Math.max(podPeak, highestPeak(seen, fnPids, true));
    fnCpu.push(cpuSeconds(seen, fnPids));
    podCpu.push(cpuSeconds(seen, fnPids, true));
    rmSync(target);
    cp.push(cpOnce());
    rmSync(target);
    if (CURL) {
      curlFile.push(await curlFileOnce());
      rmSync(target);
    }
    if (!asJson) process.stderr.write('.');
  }
} finally {
  await stack.close();
}

const mibS = (ms: number) => MIB / (ms / 1000);
const out = {
  download_mib_s: r1(mibS(median(download))),
  download_cp_mib_s: r1(mibS(median(cp))),
  download_ratio_vs_cp: r2(median(cp) / median(download)),
  download_start_ms: r1(median(starts)),
  download_bytes: bytes,
  download_client: CURL ? 'curl' : 'node',
  download_fn_peak_rss_mib: fnPeak,
  download_pod_peak_rss_mib: podPeak,
  download_fn_cpu_s_per_gib: r2((median(fnCpu) * 1024) / MIB),
  download_pod_cpu_s_per_gib: r2((median(podCpu) * 1024) / MIB),
  ...(CURL ? { curl_file_mib_s: r1(mibS(median(curlFile))), download_ratio_vs_curl_file: r2(median(curlFile) / median(download)) } : {}),
};
if (asJson) {
  console.log(JSON.stringify(out));
} else {
  process.stderr.write('\n');
  console.log(`download of a ${MIB} MiB file, ${RUNS} runs each, interleaved (${r1((performance.now() - t) / 1000)} s in all)`);
  console.log(`  through files-download (sign, export Job, stream, write)  ${out.download_mib_s} MiB/s`);
  console.log(`  cp on the same disk                                      ${out.download_cp_mib_s} MiB/s`);
  console.log(`  ratio                                                    ${out.download_ratio_vs_cp} (target >= 0.5)`);
  console.log(
    `  peak RSS: function ${out.download_fn_peak_rss_mib} MiB, export Job ${out.download_pod_peak_rss_mib} MiB; CPU per GiB: function ${out.download_fn_cpu_s_per_gib} s, export Job ${out.download_pod_cpu_s_per_gib} s`,
  );
  console.log(`  start (request to headers: export Job and Pod)          p50 ${out.download_start_ms} ms`);
  if (CURL) console.log(`  curl copying file:// to the same disk (no network)       ${out.curl_file_mib_s} MiB/s (the client's own ceiling; ratio ${out.download_ratio_vs_curl_file})`);
}

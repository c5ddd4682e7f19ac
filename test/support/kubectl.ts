/**
 * A real kubectl for the tests: Debian's `kubernetes-client` (bookworm: v1.20, the version of the
 * cluster tier's control plane), fetched with `apt-get download` and unpacked with `dpkg -x` into
 * a cache outside the repository, `~/.cache/felis-world/kubectl/<debian-version>/` (or
 * `FELIS_KUBECTL_CACHE/<debian-version>/`), the first time it is needed. Whatever `kubectl` is on
 * PATH is not used: it may be another build of another version. `FELIS_KUBECTL` names a binary to
 * use instead (it must be v1.20, as the expectations are that client's output).
 *
 * @module
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const CACHE = process.env.FELIS_KUBECTL_CACHE || join(homedir(), '.cache', 'felis-world', 'kubectl');

function candidate(): string | undefined {
  const out = execFileSync('apt-cache', ['policy', 'kubernetes-client'], { encoding: 'utf8' });
  const m = /Candidate:\s*(\S+)/.exec(out);
  return m && m[1] !== '(none)' ? m[1] : undefined;
}

/** The path of Debian's kubectl, downloaded and unpacked into the cache when missing. */
export function debianKubectl(): string {
  if (process.env.FELIS_KUBECTL) return process.env.FELIS_KUBECTL;
  // A cached version is used without asking apt (offline runs, and no apt lock needed).
  if (existsSync(CACHE)) {
    for (const v of readdirSync(CACHE).sort().reverse()) {
      const bin = join(CACHE, v, 'usr', 'bin', 'kubectl');
      if (existsSync(bin)) return bin;
    }
  }
  let version = candidate();
  if (!version) {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
    version = candidate();
  }
  if (!version) throw new Error('apt has no kubernetes-client package (Debian bookworm has it in main); set FELIS_KUBECTL to a kubectl v1.20');
  const target = join(CACHE, version);
  mkdirSync(CACHE, { recursive: true });
  const work = mkdtempSync(join(CACHE, '.download-'));
  try {
    // apt downloads as its own `_apt` user when it can write there.
    chmodSync(work, 0o755);
    execFileSync('apt-get', ['download', `kubernetes-client=${version}`], { cwd: work, stdio: ['ignore', 'ignore', 'inherit'] });
    const deb = readdirSync(work).find((f) => f.endsWith('.deb'));
    if (!deb) throw new Error('apt-get download gave no .deb');
    execFileSync('dpkg', ['-x', join(work, deb), join(work, 'root')]);
    rmSync(target, { recursive: true, force: true });
    renameSync(join(work, 'root'), target);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return join(target, 'usr', 'bin', 'kubectl');
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl to its end (or `timeoutMs`, then SIGKILL). */
export function runKubectl(bin: string, args: string[], o: { env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {}): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env: o.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : -1), stdout, stderr });
    });
    child.stdin.end(o.input ?? '');
  });
}

/**
 * Runs kubectl until `done(stdout)` is true (then SIGTERM: a watch never ends by itself), or
 * until `timeoutMs`. `started` is called once the process is running.
 */
export function runKubectlUntil(
  bin: string,
  args: string[],
  done: (stdout: string) => boolean,
  o: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): { result: Promise<KubectlResult & { sawEnd: boolean }> } {
  const child = spawn(bin, args, { env: o.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let sawEnd = false;
  const result = new Promise<KubectlResult & { sawEnd: boolean }>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 60_000);
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (!sawEnd && done(stdout)) {
        sawEnd = true;
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : -1), stdout, stderr, sawEnd });
    });
  });
  return { result };
}

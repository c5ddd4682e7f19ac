/**
 * The image build without docker: reads the Dockerfile and .dockerignore, copies the build context
 * (honouring .dockerignore) into a temporary directory, performs the build stage's COPY and RUN
 * steps there, assembles the final stage's COPY layout into a temporary image root and runs its
 * RUN steps (as its USER when this runs as root), so that what the image would hold can be started
 * and checked (`checkImage`). `npm run test:image` does all of it (test/image-rehearsal.image-test.ts).
 *
 * Substitutions, each because the machine has no registry: `npm ci` runs with `--offline` (the npm
 * cache holds every package), and `node` is this Node 24 rather than the base image's. Absolute
 * paths in RUN steps and ENV values are moved under the image root. An instruction this file does
 * not know fails the rehearsal rather than being skipped.
 * @module
 */
import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, chownSync, copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

// ---------------------------------------------------------------- Dockerfile

export interface Instruction {
  op: 'FROM' | 'WORKDIR' | 'COPY' | 'RUN' | 'ENV' | 'USER' | 'EXPOSE' | 'CMD';
  /** `--name=value` flags (COPY's --from, --chmod, --chown). */
  flags: Record<string, string>;
  /** The words after the flags (for RUN: one element, the shell command). */
  args: string[];
}

export interface Stage {
  from: string;
  name?: string;
  steps: Instruction[];
}

const KNOWN = new Set(['FROM', 'WORKDIR', 'COPY', 'RUN', 'ENV', 'USER', 'EXPOSE', 'CMD']);

export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const lines = text.replace(/\\\r?\n/g, ' ').split(/\r?\n/);
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(\S+)\s+(.*)$/.exec(line);
    if (!m) throw new Error(`Dockerfile: cannot read ${JSON.stringify(line)}`);
    const op = m[1]!.toUpperCase();
    if (!KNOWN.has(op)) throw new Error(`Dockerfile: ${op} is not something the rehearsal can perform`);
    let rest = m[2]!.trim();
    if (op === 'FROM') {
      const f = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (!f) throw new Error(`Dockerfile: cannot read FROM ${rest}`);
      stages.push({ from: f[1]!, name: f[2], steps: [] });
      continue;
    }
    const stage = stages[stages.length - 1];
    if (!stage) throw new Error(`Dockerfile: ${op} before any FROM`);
    const flags: Record<string, string> = {};
    if (op === 'COPY') {
      for (let f = /^--(\w+)=(\S+)\s+/.exec(rest); f; f = /^--(\w+)=(\S+)\s+/.exec(rest)) {
        flags[f[1]!] = f[2]!;
        rest = rest.slice(f[0].length);
      }
      const unknown = [...Object.keys(flags).filter((k) => !['from', 'chmod', 'chown'].includes(k)).map((k) => `--${k}`), ...(/^--\S+/.exec(rest) ?? [])];
      if (unknown.length) throw new Error(`Dockerfile: COPY ${unknown[0]} is not something the rehearsal can perform`);
    }
    const args = op === 'RUN' ? [rest] : op === 'CMD' && rest.startsWith('[') ? (JSON.parse(rest) as string[]) : rest.split(/\s+/);
    stage.steps.push({ op: op as Instruction['op'], flags, args });
  }
  return stages;
}

/** ENV's `K=V` pairs (values without spaces or quotes, as this Dockerfile writes them). */
export function envPairs(args: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of args) {
    const eq = a.indexOf('=');
    if (eq <= 0 || /["'\s]/.test(a)) throw new Error(`Dockerfile: ENV ${a} is not in the K=V form the rehearsal reads`);
    out[a.slice(0, eq)] = a.slice(eq + 1);
  }
  return out;
}

// ---------------------------------------------------------------- .dockerignore

function patternRegex(p: string): RegExp {
  let re = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '*' && p[i + 1] === '*') {
      // `**/` matches any number of directories (none included); a final `**` anything.
      if (p[i + 2] === '/') {
        re += '(?:.*/)?';
        i += 2;
      } else {
        re += '.*';
        i += 1;
      }
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/**
 * Docker's rule: patterns are read in order, the last one that matches a path (or one of its
 * parent directories) decides, and `!` makes it an inclusion. Returns whether `rel` is sent.
 */
export function dockerignore(text: string): { includes: (rel: string) => boolean; mayIncludeBelow: (dir: string) => boolean } {
  const rules = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const p = (negate ? l.slice(1) : l).trim().replace(/^\/+/, '').replace(/\/+$/, '');
      return { negate, p, re: patternRegex(p) };
    });
  const includes = (rel: string) => {
    const parts = rel.split('/');
    let included = true;
    for (const r of rules) {
      for (let n = 1; n <= parts.length; n++) {
        if (r.re.test(parts.slice(0, n).join('/'))) {
          included = r.negate;
          break;
        }
      }
    }
    return included;
  };
  // An excluded directory is still walked when an exception could name something inside it.
  const mayIncludeBelow = (dir: string) =>
    rules.some((r) => r.negate && (r.p.startsWith('**') || r.p.startsWith(`${dir}/`) || (r.p.includes('*') && patternRegex(r.p.split('/')[0]!).test(dir.split('/')[0]!))));
  return { includes, mayIncludeBelow };
}

/** Copies the build context `from` into `to`, as docker sends it. Returns the files sent. */
export function copyContext(from: string, to: string, ignoreText: string): string[] {
  const { includes, mayIncludeBelow } = dockerignore(ignoreText);
  const sent: string[] = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(join(from, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (includes(r) || mayIncludeBelow(r)) walk(r);
      } else if (includes(r)) {
        mkdirSync(join(to, rel), { recursive: true });
        cpSync(join(from, r), join(to, r), { verbatimSymlinks: true });
        sent.push(r);
      }
    }
  };
  walk('');
  return sent.sort();
}

// ---------------------------------------------------------------- performing the stages

export interface Rehearsal {
  /** The final stage's files, as the image would hold them. */
  imageRoot: string;
  /** The final stage's ENV, with image paths moved under imageRoot. */
  env: Record<string, string>;
  /** The final stage's USER, as written. */
  user?: string;
  /** uid/gid the image's processes run as here (only when this process is root). */
  ids?: { uid: number; gid: number };
  cmd?: string[];
  from: string[];
  /** The files sent as the build context. */
  context: string[];
  work: string;
  remove(): void;
}

export interface RehearseOptions {
  /** The checkout holding the Dockerfile and the build context. */
  root: string;
  /** Use `root`'s node_modules for the build stage instead of running `npm ci` (faster, no npm). */
  reuseNodeModules?: boolean;
  log?: (line: string) => void;
}

const isRoot = () => process.getuid?.() === 0;

/** Moves absolute paths of the image (`/app/x`, `/usr/local/...`) under `root`, where they exist there. */
function underRoot(text: string, root: string): string {
  return text.replace(/(^|[\s='"])\/([A-Za-z][\w.-]*)/g, (m, pre: string, top: string) => (existsSync(join(root, top)) ? `${pre}${root}/${top}` : m));
}

function ids(user: string | undefined): { uid: number; gid: number } | undefined {
  if (!user || !isRoot()) return undefined;
  const m = /^(\d+)(?::(\d+))?$/.exec(user);
  if (!m) throw new Error(`USER ${user}: the rehearsal needs a numeric user`);
  return { uid: Number(m[1]), gid: Number(m[2] ?? m[1]) };
}

function run(cmd: string, opts: SpawnSyncOptions & { what: string }): void {
  const r = spawnSync('sh', ['-c', cmd], { encoding: 'utf8', timeout: 600_000, ...opts });
  if (r.status !== 0) throw new Error(`${opts.what}: RUN ${cmd} failed (${r.error?.message ?? r.status}):\n${r.stdout}${r.stderr}`);
}

export function rehearse(o: RehearseOptions): Rehearsal {
  const log = o.log ?? (() => {});
  const stages = parseDockerfile(readFileSync(join(o.root, 'Dockerfile'), 'utf8'));
  if (stages.length < 2) throw new Error('Dockerfile: expected a build stage and a final stage');
  const work = mkdtempSync(join(tmpdir(), 'felis-image-'));
  // The image's user must be able to reach the image root inside it.
  chmodSync(work, 0o755);
  const remove = () => rmSync(work, { recursive: true, force: true });
  try {
    const context = join(work, 'context');
    const sent = copyContext(o.root, context, readFileSync(join(o.root, '.dockerignore'), 'utf8'));
    log(`context: ${sent.length} files`);
    const nodeDir = dirname(process.execPath);
    const roots = new Map<string, string>();

    const perform = (stage: Stage, fsRoot: string, final: boolean) => {
      let cwd = fsRoot;
      const env: Record<string, string> = {};
      let user: string | undefined;
      let cmd: string[] | undefined;
      for (const s of stage.steps) {
        const what = `${stage.name ?? 'final'} stage`;
        switch (s.op) {
          case 'WORKDIR':
            cwd = join(fsRoot, s.args[0]!);
            mkdirSync(cwd, { recursive: true });
            break;
          case 'ENV':
            for (const [k, v] of Object.entries(envPairs(s.args))) env[k] = v;
            break;
          case 'USER':
            user = s.args[0];
            break;
          case 'EXPOSE':
            break;
          case 'CMD':
            cmd = s.args;
            break;
          case 'COPY': {
            const dst = s.args[s.args.length - 1]!;
            const srcs = s.args.slice(0, -1);
            const fromRoot = s.flags.from ? roots.get(s.flags.from) : context;
            if (!fromRoot) throw new Error(`${what}: COPY --from=${s.flags.from}: no such stage`);
            for (const src of srcs) {
              const from = join(fromRoot, src);
              if (!existsSync(from)) throw new Error(`${what}: COPY ${src}: not in ${s.flags.from ? `stage ${s.flags.from}` : 'the build context'}`);
              const isDir = statSync(from).isDirectory();
              const into = dst.startsWith('/') ? join(fsRoot, dst) : join(cwd, dst);
              // Docker: a directory's contents go into dst; a file goes into dst/ or becomes dst.
              const target = !isDir && (dst.endsWith('/') || srcs.length > 1 || (existsSync(into) && statSync(into).isDirectory())) ? join(into, src.split('/').pop()!) : into;
              mkdirSync(isDir ? target : dirname(target), { recursive: true });
              cpSync(from, target, { recursive: true, verbatimSymlinks: true });
              const touch = (p: string) => {
                if (s.flags.chmod) chmodSync(p, parseInt(s.flags.chmod, 8));
                if (s.flags.chown && isRoot()) {
                  const [u, g] = s.flags.chown.split(':').map(Number);
                  chownSync(p, u!, g ?? u!);
                }
                if (statSync(p).isDirectory()) for (const e of readdirSync(p)) touch(join(p, e));
              };
              if (s.flags.chmod || s.flags.chown) touch(target);
            }
            break;
          }
          case 'RUN': {
            let command = s.args[0]!;
            if (/\bnpm ci\b/.test(command) && o.reuseNodeModules) {
              symlinkSync(join(o.root, 'node_modules'), join(cwd, 'node_modules'));
              log(`${what}: node_modules from ${o.root} instead of: ${command}`);
              break;
            }
            command = command.replace(/\bnpm ci\b/g, 'npm ci --offline');
            if (final) command = underRoot(command, fsRoot);
            if (!isRoot()) command = command.replace(/\s-[og]\s+\d+/g, '');
            const who = final ? ids(user) : undefined;
            const t = performance.now();
            run(command, {
              what,
              cwd,
              env: {
                ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, final ? underRoot(v, fsRoot) : v])),
                PATH: `${final ? dirname(imageNode(fsRoot)) : nodeDir}:${process.env.PATH}`,
                HOME: who ? cwd : (process.env.HOME ?? cwd),
                // The image's own /tmp: what a step leaves there stays in the image, and is checked.
                ...(final ? { TMPDIR: join(fsRoot, 'tmp') } : {}),
              },
              ...(who ?? {}),
            });
            log(`${what}: RUN ${command} (${Math.round(performance.now() - t)} ms)`);
            break;
          }
        }
      }
      return { env, user, cmd };
    };

    const buildStages = stages.slice(0, -1);
    for (const st of buildStages) {
      const r = join(work, `stage-${st.name ?? roots.size}`);
      mkdirSync(r, { recursive: true });
      roots.set(st.name ?? String(roots.size), r);
      perform(st, r, false);
    }
    const final = stages[stages.length - 1]!;
    const imageRoot = join(work, 'image');
    // What the base image brings that the steps rely on.
    mkdirSync(join(imageRoot, 'usr/local/bin'), { recursive: true });
    // The base image's Node, at its place there. Not this checkout's: the image's user may not be
    // able to reach it (a clone under a 0700 `mktemp -d`), and would then run the machine's Node.
    copyFileSync(process.execPath, imageNode(imageRoot));
    chmodSync(imageNode(imageRoot), 0o755);
    mkdirSync(join(imageRoot, 'tmp'));
    chmodSync(join(imageRoot, 'tmp'), 0o1777);
    const { env, user, cmd } = perform(final, imageRoot, true);
    return {
      imageRoot,
      env: Object.fromEntries(Object.entries(env).map(([k, v]) => [k, underRoot(v, imageRoot)])),
      user,
      ids: ids(user),
      cmd,
      from: stages.map((s) => s.from),
      context: sent,
      work,
      remove,
    };
  } catch (err) {
    remove();
    throw err;
  }
}

// ---------------------------------------------------------------- checking the result

/** Every path under `root` with its type, mode, size and mtime: equal before and after means nothing was written. */
export function treeState(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (p: string) => {
    const st = lstatSync(p);
    out.set(relative(root, p) || '.', `${st.mode.toString(8)} ${st.size} ${st.mtimeMs}`);
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
  };
  walk(root);
  return out;
}

/** Takes write permission away from the whole image root, as a read-only root filesystem would. */
export function makeReadOnly(root: string): void {
  const st = lstatSync(root);
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) for (const e of readdirSync(root)) makeReadOnly(join(root, e));
  chmodSync(root, st.mode & 0o7555);
}

/** Gives write permission back to the owner, so the tree can be removed. */
export function makeWritable(root: string): void {
  const st = lstatSync(root);
  if (st.isSymbolicLink()) return;
  chmodSync(root, (st.mode & 0o7777) | 0o200);
  if (st.isDirectory()) for (const e of readdirSync(root)) makeWritable(join(root, e));
}

export interface Started {
  url: string;
  output(): string;
  /** Resolves once the function logged that its routes and client are loaded. */
  loaded(): Promise<void>;
  stop(): Promise<number | null>;
}

/** The env a container of the image starts with; its /tmp is the image's, read-only like the rest. */
function imageEnv(r: Rehearsal): Record<string, string> {
  return { ...r.env, PATH: `${join(r.imageRoot, 'usr/local/bin')}:/usr/bin:/bin`, TMPDIR: join(r.imageRoot, 'tmp') };
}

/** Where the base image (node:24-slim) keeps its Node. */
export function imageNode(imageRoot: string): string {
  return join(imageRoot, 'usr/local/bin/node');
}

/** Starts a function bundle of the image with the image's env plus `extra`, as its user, and waits for its port. */
export async function startImageFunction(r: Rehearsal, name: string, extra: Record<string, string>, cwd: string): Promise<Started> {
  const bundle = join(r.imageRoot, 'app/functions', `${name}.mjs`);
  const child = spawn(imageNode(r.imageRoot), [bundle], {
    env: { ...imageEnv(r), ...extra },
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(r.ids ?? {}),
  });
  let out = '';
  child.stderr.on('data', (d) => (out += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  child.once('exit', () => clearTimeout(timer));
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code, sig) => reject(new Error(`${name} exited (${code ?? sig}) before listening:\n${out}`)));
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      const m = /"port":(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
  });
  const loaded = () =>
    new Promise<void>((resolve, reject) => {
      if (/"loaded_ms":/.test(out)) return resolve();
      child.once('exit', (code) => reject(new Error(`${name} exited (${code}) while loading:\n${out}`)));
      child.stdout.on('data', () => /"loaded_ms":/.test(out) && resolve());
    });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    return code as number | null;
  };
  return { url: `http://127.0.0.1:${port}`, output: () => out, loaded, stop };
}

/** Runs the image's Job program as the Job does (by its path, found through the shebang) on `worldsRoot`. */
export function runImageFelis(r: Rehearsal, args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const res = spawnSync(join(r.imageRoot, 'usr/local/bin/felis'), args, {
    env: imageEnv(r),
    cwd,
    encoding: 'utf8',
    timeout: 30_000,
    ...(r.ids ?? {}),
  });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr + (res.error ? String(res.error) : '') };
}

/** A directory the image's user may write: where its processes work, outside the image root. */
export function scratchFor(r: Rehearsal, name: string): string {
  const d = join(r.work, name);
  mkdirSync(d, { recursive: true });
  if (r.ids) chownSync(d, r.ids.uid, r.ids.gid);
  return d;
}

/** A kubeconfig that loads without any API server behind it (probes and loading need none). */
export function offlineKubeconfig(dir: string): string {
  const f = join(dir, 'offline.kubeconfig');
  writeFileSync(
    f,
    'apiVersion: v1\nkind: Config\nclusters: [{name: x, cluster: {server: "https://127.0.0.1:9"}}]\nusers: [{name: x, user: {token: x}}]\ncontexts: [{name: x, context: {cluster: x, user: x}}]\ncurrent-context: x\n',
  );
  chmodSync(f, 0o644);
  return f;
}

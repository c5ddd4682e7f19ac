/**
 * knative/ as `kubectl apply -k knative/` sends it: rendered by kustomize itself (`kubectl
 * kustomize`), not by an emulation, so the tests check what a cluster would receive. Options edit
 * a copy of the tree the way an operator edits the real one: the namespace in namespace.yaml,
 * the components list and the `images` entry in kustomization.yaml. The copy keeps the tree's place
 * next to functions/, whose folders hold each function's manifest (their yaml files are copied too).
 *
 * Needs kubectl with kustomize v5 or later on PATH (or `KUBECTL=/path/to/kubectl`). Debian's
 * `kubernetes-client` package is 1.20, whose kustomize (v2) has no components, replacements or
 * transformer options; it cannot render knative/.
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { dump, load, loadAll } from 'js-yaml';

export type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
  [k: string]: any;
};

export interface RenderOptions {
  /** The namespace to install into (namespace.yaml); default: as written there (minecraft). */
  namespace?: string;
  /** The components to include, by folder under components/; default: as kustomization.yaml lists them. */
  components?: string[];
  /** Replaces the kustomization's `images` entry. */
  image?: { newName?: string; newTag?: string; digest?: string };
  /** Settings to change in config.env (each must already be there). */
  config?: Record<string, string>;
}

/** The kubectl binary, checked once to carry kustomize v5 or later. */
let checked: string | undefined;
export function kubectl(): string {
  if (checked) return checked;
  const bin = process.env.KUBECTL || 'kubectl';
  let out: string;
  try {
    out = execFileSync(bin, ['version', '--client', '--output=json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    throw new Error(`the manifest tests render knative/ with kubectl's kustomize; ${bin} did not run (${(err as Error).message}). Install kubectl >= 1.27 (kustomize v5) on PATH or set KUBECTL`);
  }
  const v = (JSON.parse(out) as { kustomizeVersion?: string }).kustomizeVersion ?? '';
  const major = Number(/^v?(\d+)\./.exec(v)?.[1] ?? 0);
  if (major < 5) throw new Error(`${bin} has kustomize ${v || '(none)'}; knative/ needs kustomize v5 or later (kubectl >= 1.27)`);
  checked = bin;
  return bin;
}

/**
 * A copy of `dir` with `opts` applied, for kustomize to render, in a new folder that also holds the
 * yaml files of the function folders (functions/ next to `dir`), which the copy's kustomizations
 * list by relative path; the caller removes `tree`.
 */
function prepare(dir: string, opts: RenderOptions): { tree: string; copy: string } {
  const tree = mkdtempSync(join(tmpdir(), 'felis-kustomize-'));
  const copy = join(tree, basename(dir));
  cpSync(dir, copy, { recursive: true });
  cpSync(join(dirname(dir), 'functions'), join(tree, 'functions'), { recursive: true, filter: (src) => statSync(src).isDirectory() || /\.ya?ml$/.test(src) });
  if (opts.namespace !== undefined) {
    const file = join(copy, 'namespace.yaml');
    const ns = load(readFileSync(file, 'utf8')) as Obj;
    ns.metadata.namespace = opts.namespace;
    writeFileSync(file, dump(ns));
  }
  if (opts.components !== undefined || opts.image !== undefined) {
    const file = join(copy, 'kustomization.yaml');
    const k = load(readFileSync(file, 'utf8')) as Record<string, any>;
    if (opts.components !== undefined) {
      if (opts.components.length > 0) k.components = opts.components.map((c) => `components/${c}`);
      else delete k.components;
    }
    if (opts.image !== undefined) k.images = [{ name: 'felis-world', ...opts.image }];
    writeFileSync(file, dump(k));
  }
  if (opts.config !== undefined) {
    const file = join(copy, 'config.env');
    let text = readFileSync(file, 'utf8');
    for (const [k, v] of Object.entries(opts.config)) {
      const line = new RegExp(`^${k}=.*$`, 'm');
      if (!line.test(text)) throw new Error(`config.env has no ${k}`);
      text = text.replace(line, `${k}=${v}`);
    }
    writeFileSync(file, text);
  }
  return { tree, copy };
}

const parseAll = (out: string) => (loadAll(out) as (Obj | null)[]).filter((o): o is Obj => o !== null);
const KUSTOMIZE_OPTS = { encoding: 'utf8', maxBuffer: 64 << 20 } as const;

/** The objects `kubectl kustomize <dir>` prints, after applying `opts` to a copy of `dir`. */
export function render(dir: string, opts: RenderOptions = {}): Obj[] {
  const { tree, copy } = prepare(dir, opts);
  try {
    return parseAll(execFileSync(kubectl(), ['kustomize', copy], { ...KUSTOMIZE_OPTS, stdio: ['ignore', 'pipe', 'pipe'] }));
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
}

/** {@link render}, without blocking: several renders run side by side. */
export async function renderAsync(dir: string, opts: RenderOptions = {}): Promise<Obj[]> {
  const { tree, copy } = prepare(dir, opts);
  try {
    const { stdout } = await promisify(execFile)(kubectl(), ['kustomize', copy], KUSTOMIZE_OPTS);
    return parseAll(stdout);
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
}

/** The rendered objects of `dir` (knative/), as kustomize renders them. */
export function assemble(dir: string, opts: RenderOptions = {}): Obj[] {
  return render(dir, opts);
}

/** Dotted field paths with numeric list indices and `[name=x]` list selectors, as kustomize writes them. */
export function getPath(obj: unknown, path: string): unknown {
  let n: any = obj;
  for (const s of path.split('.').filter(Boolean)) {
    const sel = /^\[(\w+)=(.*)\]$/.exec(s);
    if (sel) n = Array.isArray(n) ? n.find((x) => x?.[sel[1]!] === sel[2]) : undefined;
    else n = n?.[/^\d+$/.test(s) && Array.isArray(n) ? Number(s) : s];
  }
  return n;
}

/** The objects of one kind by name. */
export function byKind(objs: Obj[], kind: string): Map<string, Obj> {
  return new Map(objs.filter((o) => o.kind === kind).map((o) => [o.metadata.name, o]));
}

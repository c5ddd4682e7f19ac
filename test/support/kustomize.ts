/**
 * The part of `kustomize build` that knative/kustomization.yaml uses, so the tests check the objects
 * `kubectl apply -k knative/` would send: `resources` (files), `namespace`, `images` and
 * `replacements` (a source field copied into target fields). Anything else in the kustomization
 * is refused, so a new feature cannot slip past the checks unassembled.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load, loadAll } from 'js-yaml';

export type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
  [k: string]: any;
};

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  resources?: string[];
  images?: { name: string; newName?: string; newTag?: string }[];
  replacements?: {
    source: { kind: string; name: string; fieldPath: string };
    targets: { select: { kind: string; name?: string }; fieldPaths: string[] }[];
  }[];
}

const KNOWN = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'images', 'replacements']);
/** Kinds the namespace transformer leaves alone. */
const CLUSTER_SCOPED = new Set(['CustomResourceDefinition', 'Namespace', 'ClusterRole', 'ClusterRoleBinding']);

export function assemble(dir: string): Obj[] {
  const k = load(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization;
  for (const key of Object.keys(k)) if (!KNOWN.has(key)) throw new Error(`kustomization field not supported by the test assembly: ${key}`);
  const objs: Obj[] = [];
  for (const r of k.resources ?? []) {
    for (const doc of loadAll(readFileSync(join(dir, r), 'utf8'))) if (doc) objs.push(doc as Obj);
  }
  if (k.namespace) setNamespace(objs, k.namespace);
  for (const img of k.images ?? []) setImage(objs, img);
  for (const rep of k.replacements ?? []) {
    const src = objs.filter((o) => o.kind === rep.source.kind && o.metadata.name === rep.source.name);
    if (src.length !== 1) throw new Error(`replacement source ${rep.source.kind}/${rep.source.name}: ${src.length} matches`);
    const value = getPath(src[0]!, rep.source.fieldPath);
    if (value === undefined) throw new Error(`replacement source ${rep.source.kind}/${rep.source.name} has no ${rep.source.fieldPath}`);
    for (const t of rep.targets) {
      const hits = objs.filter((o) => o.kind === t.select.kind && (t.select.name === undefined || o.metadata.name === t.select.name));
      if (hits.length === 0) throw new Error(`replacement target ${t.select.kind}/${t.select.name ?? '*'} matches nothing`);
      for (const o of hits) for (const p of t.fieldPaths) setPath(o, p, value);
    }
  }
  return objs;
}

function setNamespace(objs: Obj[], ns: string): void {
  for (const o of objs) {
    if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = ns;
    // kustomize also moves the ServiceAccount subjects of bindings along with their accounts.
    if (o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding') {
      for (const s of o.subjects ?? []) if (s.kind === 'ServiceAccount') s.namespace = ns;
    }
  }
}

/** Every `containers[].image` / `initContainers[].image` whose name (before tag or digest) matches. */
function setImage(objs: Obj[], img: { name: string; newName?: string; newTag?: string }): void {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    for (const [key, v] of Object.entries(node)) {
      if ((key === 'containers' || key === 'initContainers') && Array.isArray(v)) {
        for (const c of v as { image?: string }[]) {
          if (typeof c.image !== 'string') continue;
          const m = /^([^@]*?)(?::([^:/@]+))?(@.*)?$/.exec(c.image)!;
          if (m[1] !== img.name) continue;
          c.image = `${img.newName ?? m[1]}${img.newTag ? `:${img.newTag}` : m[2] ? `:${m[2]}` : ''}`;
        }
      }
      visit(v);
    }
  };
  visit(objs);
}

/** Dotted field paths with numeric list indices and `[name=x]` list selectors, as kustomize writes them. */
function steps(path: string): string[] {
  return path.split('.').filter(Boolean);
}

function step(node: any, s: string): any {
  const sel = /^\[(\w+)=(.*)\]$/.exec(s);
  if (sel) return Array.isArray(node) ? node.find((x) => x?.[sel[1]!] === sel[2]) : undefined;
  return node?.[/^\d+$/.test(s) && Array.isArray(node) ? Number(s) : s];
}

export function getPath(obj: unknown, path: string): unknown {
  let n: any = obj;
  for (const s of steps(path)) n = step(n, s);
  return n;
}

function setPath(obj: unknown, path: string, value: unknown): void {
  const ss = steps(path);
  const parent = ss.slice(0, -1).reduce((n: any, s) => step(n, s), obj);
  if (parent === undefined || parent === null) throw new Error(`replacement target path ${path} does not exist`);
  parent[ss[ss.length - 1]!] = value;
}

/** The assembled objects of knative/ by kind and name. */
export function byKind(objs: Obj[], kind: string): Map<string, Obj> {
  return new Map(objs.filter((o) => o.kind === kind).map((o) => [o.metadata.name, o]));
}

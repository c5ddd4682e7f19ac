/**
 * The layering of lib/, checked from the code: every `import`/`export … from` (type-only ones
 * included, since a type import ties two modules as much as a value import when one of them moves)
 * between the non-test modules of lib/ is read, and the check fails on an import circle or on an
 * import that runs up the layers below. `npm run check-imports` prints what it finds; the layering
 * test runs the same check.
 *
 * The layers, top first. A module may import its own folder's files and any folder on a lower
 * layer, never one on its own layer or above:
 *   testing                          route-test support: builds whole apps, so above the edge
 *   http                             the HTTP edge: statuses, envelopes, requests, errors as HTTP
 *   config.ts                        the whole configuration, gathered from each part's own
 *   browse uploads downloads         request features over serving Jobs; no HTTP (domain errors)
 *   maintenance                      the world lock, the gates, settling restore chains
 *   files                            the file editor: one file Job per call
 *   ops                              background ops (the editor starts them)
 *   runner job-spec auth             running Jobs, rendering them, who may do what
 *   events                           the event a request serves, its refusals, event parsing
 *   kube protocol                    the cluster's narrow APIs; the functions-to-Job protocol
 *   (other lib/ files)               errors, labels, log, actor, env readers: imported by all
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * Each lib/ folder's layer, and a layer of its own for a file directly in lib/ that gathers from
 * above (the others are the `.` layer). Higher imports lower.
 */
export const LAYERS: Record<string, number> = {
  '.': 0,
  kube: 1, protocol: 1,
  events: 2,
  runner: 3, 'job-spec': 3, auth: 3,
  ops: 4,
  files: 5,
  maintenance: 6,
  browse: 7, uploads: 7, downloads: 7,
  'config.ts': 8,
  http: 9,
  testing: 10,
};

/**
 * Imports the layer rule lets through, each with why; the check fails on any other upward import.
 * None today: the CloudEvents entry, HTTP edge code, lives in lib/http (event-entry.ts).
 */
export const ALLOWED_UPWARD: Record<string, string> = {};

const isModule = (name: string) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts');

/** Every module under `dir`, recursively (tests and declarations left out). */
export function modulesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...modulesUnder(p));
    else if (isModule(e.name)) out.push(p);
  }
  return out;
}

/** Every lib/ module (repo-relative, `/`-separated) and the lib/ modules it imports. */
export function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const rel = (p: string) => relative(root, p).split(sep).join('/');
  for (const file of modulesUnder(join(root, 'lib')).sort()) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set<string>();
    for (const imp of info.importedFiles) {
      if (!imp.fileName.startsWith('.')) continue;
      const to = rel(resolve(dirname(file), imp.fileName));
      if (to.startsWith('lib/') && isModule(to)) targets.add(to);
    }
    graph.set(rel(file), [...targets].sort());
  }
  return graph;
}

/** The lib/ folder a module belongs to (its first folder under lib/, or `.`). */
export function folderOf(path: string): string {
  const parts = path.split('/');
  return parts.length > 2 ? parts[1] : '.';
}

/** A module's layer: its folder's, or for a file directly in lib/ its own if it has one. */
export function layerOf(path: string): number | undefined {
  const folder = folderOf(path);
  if (folder === '.') return LAYERS[path.slice('lib/'.length)] ?? LAYERS['.'];
  return LAYERS[folder];
}

/** Import circles (strongly connected sets of more than one module, or a module importing itself). */
export function circles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const set: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        set.push(w);
      } while (w !== v);
      if (set.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(set.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

/** Imports that break the layer rule, as `from -> to` with the two folders' layers. */
export function upwardImports(graph: Map<string, string[]>): string[] {
  const bad: string[] = [];
  for (const [from, tos] of graph) {
    const ff = folderOf(from);
    for (const to of tos) {
      const tf = folderOf(to);
      const a = layerOf(from);
      const b = layerOf(to);
      if (a === undefined || b === undefined) {
        bad.push(`${from} -> ${to}: lib/${a === undefined ? ff : tf} has no layer; give it one`);
      } else if (a === b && ff === tf) {
      } else if (b >= a && !Object.hasOwn(ALLOWED_UPWARD, `${from} -> ${to}`)) {
        bad.push(`${from} -> ${to}: ${ff === '.' ? from : ff} (layer ${a}) may not import ${tf === '.' ? to : tf} (layer ${b})`);
      }
    }
  }
  return bad;
}

/** Everything wrong with lib/'s imports; empty when the layering holds. */
export function checkImports(root: string): string[] {
  const graph = importGraph(root);
  return [
    ...circles(graph).map((c) => `import circle: ${c.join(' <-> ')}`),
    ...upwardImports(graph),
  ];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const problems = checkImports(fileURLToPath(new URL('..', import.meta.url)));
  for (const p of problems) console.log(p);
  console.log(problems.length === 0 ? 'lib/ imports: no circles, layers hold' : `${problems.length} problem(s)`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}

/**
 * The layering of the whole tree, checked from the code: every `import`/`export … from` and
 * `import()` (type-only ones included, since a type import ties two modules as much as a value
 * import when one of them moves) between the modules of lib/, job/, functions/, cluster/,
 * scripts/, bench/ and test/ is read, and the check fails on an import circle anywhere, on an
 * import from one tree into another the table below does not allow, on a production module
 * importing test code, or on an import that runs up a tree's layers. `npm run check-imports`
 * prints what it finds; the layering test (lib/layering.test.ts) runs the same check.
 *
 * Test code is a `*.test.ts` (or `*.container-test.ts` and the like), a test kit (`*.test-kit.ts`),
 * a module under a `testing/` folder, or anything under test/. It may import anything; no module of
 * lib/, job/, functions/ or cluster/ may import it. Layers hold among production modules.
 *
 * Across trees (TREE_IMPORTS): functions/ imports lib/; job/ imports only the pure lib/ modules of
 * JOB_LIB (no client-node, no Hono: the Job's bundle starts fast), and everything it reaches
 * through them is in JOB_LIB too; cluster/ imports only lib/kube/connections.ts (client-node's kept-alive pool, the
 * one it also serves the tests with); lib/ imports nothing outside itself but the routes' declarations
 * (below); scripts/ and bench/ are tools and may import anything.
 *
 * Route declarations: each function declares its routes in functions/<fn>/routes.ts (table entries,
 * prose) and functions/<fn>/schemas.ts (zod schemas). The route collectors of lib/http/routes
 * (ROUTE_COLLECTORS: table.generated.ts and schemas.generated.ts, which scripts/collect.ts writes) may import them, and nothing else of
 * functions/; a declaration imports only its own folder's other declaration, its op's contract and the lib/ modules of
 * DECLARATION_LIB (the table's types, the shared entry and schema pieces, zod, constants), and
 * everything it reaches in lib/ through them is in DECLARATION_LIB too. So a declaration never
 * reaches a handler, Hono or a collector: lib/ → functions/ runs one way, with no circle.
 *
 * A capability's folder, functions/<fn>/, holds four kinds of module, each counted where it runs:
 * its `op.ts` is the op's contract, counted as lib/protocol (it imports only lib/protocol; the
 * collector lib/protocol/contracts.generated.ts imports it, and both bundles carry it); its `result.ts` is the op's
 * result type and decoder, counted as lib/files (it imports only lib/protocol, lib/files and its op.ts; the
 * editor, lib/files/editor.ts, decodes with it, and job/ may not import it, so the Job's bundle never
 * carries the decoders); its `job/` is Job code,
 * counted as job/ on the capabilities' floor (it imports the job/ floors below, its own op.ts and
 * JOB_LIB; only the job/ floors above and tests import it); the rest is the function (functions/
 * -> lib/). No module of a function's folder imports another function's folder: what two ops
 * share is in job/op-kit.
 *
 * Inside each tree, the layers, top first. A module may import its own folder's files and any
 * folder (or top-level file) on a lower layer, never one on its own layer or above:
 *
 * lib/
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
 *
 * job/ (the Job program)
 *   main.ts cli.ts                   the entry and its modes, picked by flag
 *   export                           `felis export`: one download served
 *   serve                            the serving modes on the Pod address (and a pull's cancel)
 *   dispatch                         one op request to its op, after the world is opened
 *   upload                           an upload's placing (over the write and mkdir ops)
 *   functions/<fn>/job               each op's run (its capability's folder, see above)
 *   op-kit                           the context an op runs in (recovery first), checks two ops share
 *   archive                          the archive codecs, and packing and placing archives
 *   trash                            the undo trash on the volume
 *   runtime                          the op request's types, working files, withheld files,
 *                                    redacted values, moved links
 *   journal                          the op journal and its recovery
 *   volume listing program pull http containment and the volume's primitives; a listing's index;
 *                                    flags and exit; a pull's outbound side (guard, connection);
 *                                    the serving modes' one HTTP stack (router, guard, listener)
 *
 * functions/
 *   index.ts                         every function on one server
 *   (each function's folder)         its app, its route declarations (routes.ts, schemas.ts);
 *                                    no function imports another
 *
 * cluster/
 *   index.ts real                    the embedded cluster assembled; the real control plane's
 *   apiserver.ts persist.ts          the API server; persistence (with the kubelet's journal)
 *   kubelet                          Pods as local processes
 *   registry.ts tables.ts watch.ts   the object registry and what reads it, the controllers
 *   garbage-collector.ts job-controller.ts persist-bench.ts
 *   kinds                            the kinds' validation and defaults
 *   (other cluster/ files)           store, patches, errors, RBAC, TLS, listening
 *
 * scripts/, bench/: no layers (tools; circles are still refused).
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The trees the check reads, each a top-level folder. */
export const TREES = ['lib', 'job', 'functions', 'cluster', 'scripts', 'bench', 'test'] as const;

/**
 * Each tree's layers: a folder's (its first folder under the tree), a top-level file's own if it
 * has one, else `.`'s for top-level files; `*` for a folder not named. Higher imports lower. A
 * tree without a table (scripts, bench, test) has no layers.
 */
export const LAYERS: Record<string, Record<string, number>> = {
  lib: {
    '.': 0,
    kube: 1,
    protocol: 1,
    events: 2,
    runner: 3,
    'job-spec': 3,
    auth: 3,
    ops: 4,
    files: 5,
    maintenance: 6,
    browse: 7,
    uploads: 7,
    downloads: 7,
    'config.ts': 8,
    http: 9,
    testing: 10,
  },
  job: {
    volume: 0,
    listing: 0,
    program: 0,
    pull: 0,
    http: 0,
    journal: 1,
    runtime: 2,
    trash: 3,
    archive: 4,
    'op-kit': 5,
    'functions/*/job': 6,
    upload: 7,
    dispatch: 8,
    serve: 9,
    export: 10,
    '.': 11,
  },
  functions: { '*': 0, '.': 1 },
  cluster: {
    '.': 0,
    kinds: 1,
    'registry.ts': 2,
    'tables.ts': 2,
    'watch.ts': 2,
    'garbage-collector.ts': 2,
    'job-controller.ts': 2,
    kubelet: 3,
    'apiserver.ts': 4,
    'persist.ts': 4,
    'index.ts': 5,
    real: 5,
    'persist-bench.ts': 5,
  },
};

/** Which trees a tree's production modules may import (its own always); `*` is any. */
export const TREE_IMPORTS: Record<string, readonly string[]> = {
  lib: [],
  job: [],
  functions: ['lib'],
  cluster: [],
  scripts: ['*'],
  bench: ['*'],
  test: ['*'],
};

/**
 * The lib/ modules job/ may import (a folder ends in `/`): pure ones, with no client-node, Hono or
 * zod, so the Job's bundle stays small and starts fast. What job/ reaches through these must be
 * here too.
 */
export const JOB_LIB: readonly string[] = [
  'lib/protocol/',
  'lib/errors.ts',
  'lib/env-readers.ts',
  'lib/files/archive-names.ts',
  'lib/files/name-field.ts',
  'lib/files/pack-names.ts',
  'lib/uploads/config.ts',
];

/** The modules of lib/ that collect the functions' route declarations (see the doc comment). */
export const ROUTE_COLLECTORS: readonly string[] = ['lib/http/routes/table.generated.ts', 'lib/http/routes/schemas.generated.ts'];

/** A function's route declaration: `functions/<fn>/routes.ts` or `functions/<fn>/schemas.ts`. */
export const isRouteDeclaration = (path: string) => /^functions\/[^/]+\/(routes|schemas)\.ts$/.test(path);

/**
 * The lib/ modules a route declaration may import (a folder ends in `/`): what declaring a route
 * needs, and what they reach. None of them imports a collector, Hono or a handler.
 */
export const DECLARATION_LIB: readonly string[] = [
  'lib/http/routes/types.ts',
  'lib/http/routes/common-entries.ts',
  'lib/http/routes/common-schemas.ts',
  'lib/http/write-body.ts',
  'lib/http/envelope.ts',
  'lib/auth/permission.ts',
  'lib/protocol/',
  'lib/schema.ts',
  'lib/errors.ts',
];

/** The cross-tree imports cluster/ may make, each a module (see the doc comment). */
export const CLUSTER_LIB: readonly string[] = ['lib/kube/connections.ts'];

/**
 * Imports the layer rule lets through, each with why; the check fails on any other upward import.
 * None today.
 */
export const ALLOWED_UPWARD: Record<string, string> = {};

const isModule = (name: string) => name.endsWith('.ts') && !name.endsWith('.d.ts');

/** Test code: tests, test kits, a `testing/` folder's modules, and all of test/. */
export function isTestCode(path: string): boolean {
  return /\.test\.ts$|-test\.ts$|\.test-kit\.ts$/.test(path) || path.split('/').includes('testing') || path.startsWith('test/');
}

/** Every module under `dir`, recursively (declarations left out; tests too unless `withTests`). */
export function modulesUnder(dir: string, withTests = false): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules') out.push(...modulesUnder(p, withTests));
    } else if (isModule(e.name) && (withTests || !e.name.endsWith('.test.ts'))) out.push(p);
  }
  return out;
}

/** Every module of the trees (repo-relative, `/`-separated) and the modules of the trees it imports. */
export function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const rel = (p: string) => relative(root, p).split(sep).join('/');
  const files: string[] = [];
  for (const tree of TREES) {
    try {
      files.push(...modulesUnder(join(root, tree), true));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  for (const file of files.sort()) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set<string>();
    for (const imp of info.importedFiles) {
      if (!imp.fileName.startsWith('.')) continue;
      const to = rel(resolve(dirname(file), imp.fileName));
      if (isModule(to) && (TREES as readonly string[]).includes(to.split('/')[0])) targets.add(to);
    }
    graph.set(rel(file), [...targets].sort());
  }
  return graph;
}

/** A capability's contract, functions/<fn>/op.ts: counted as lib/protocol. */
export const isContract = (path: string) => /^functions\/[^/]+\/op\.ts$/.test(path);

/** An op's result type and decoder, functions/<fn>/result.ts: counted as lib/files, where the editor decodes with it. */
export const isDecoder = (path: string) => /^functions\/[^/]+\/result\.ts$/.test(path);

/** The function whose Job-side code (functions/<fn>/job/) a module is, if it is. */
export const jobSideOf = (path: string) => /^functions\/([^/]+)\/job\//.exec(path)?.[1];

/** The function folder (functions/<fn>/) a module is in, whatever its kind. */
const functionOf = (path: string) => /^functions\/([^/]+)\//.exec(path)?.[1];

/** A module's tree (its top-level folder), a capability's contract, decoder and Job-side code counted where they run. */
export const treeOf = (path: string) => (isContract(path) || isDecoder(path) ? 'lib' : jobSideOf(path) !== undefined ? 'job' : path.split('/')[0]);

/** The folder a module belongs to within its tree (its first folder under the tree, or `.`). */
export function folderOf(path: string): string {
  if (isContract(path)) return 'protocol';
  if (isDecoder(path)) return 'files';
  const fn = jobSideOf(path);
  if (fn !== undefined) return `functions/${fn}/job`;
  const parts = path.split('/');
  return parts.length > 2 ? parts[1] : '.';
}

/** A module's layer in its tree: its folder's, or for a top-level file its own if it has one. */
export function layerOf(path: string): number | undefined {
  const table = LAYERS[treeOf(path)];
  if (!table) return undefined;
  const folder = folderOf(path);
  if (jobSideOf(path) !== undefined) return table['functions/*/job'];
  if (folder === '.') return table[path.slice(treeOf(path).length + 1)] ?? table['.'];
  return table[folder] ?? table['*'];
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

const listed = (list: readonly string[], path: string) => list.some((m) => (m.endsWith('/') ? path.startsWith(m) : path === m));

/** Imports from one tree into another the rules refuse, and production imports of test code. */
export function crossImports(graph: Map<string, string[]>): string[] {
  const bad: string[] = [];
  for (const [from, tos] of graph) {
    if (isTestCode(from)) continue;
    const ft = treeOf(from);
    const tools = TREE_IMPORTS[ft]?.includes('*');
    for (const to of tos) {
      const tt = treeOf(to);
      const fn = functionOf(from);
      if (isTestCode(to) && !tools) bad.push(`${from} -> ${to}: production code may not import test code`);
      else if (fn !== undefined && functionOf(to) !== undefined && functionOf(to) !== fn) bad.push(`${from} -> ${to}: functions/${fn}/ may not import another function's folder`);
      else if (isContract(from) && !to.startsWith('lib/protocol/')) bad.push(`${from} -> ${to}: a contract (op.ts) imports only lib/protocol/`);
      else if (isDecoder(from) && !to.startsWith('lib/protocol/') && !to.startsWith('lib/files/') && !(isContract(to) && functionOf(to) === fn))
        bad.push(`${from} -> ${to}: a decoder (result.ts) imports only lib/protocol/, lib/files/ and its op's contract`);
      else if (tt === ft || tools || TREE_IMPORTS[ft]?.includes(tt)) continue;
      else if (ft === 'job' && (listed(JOB_LIB, to) || isContract(to))) continue;
      else if (ft === 'cluster' && listed(CLUSTER_LIB, to)) continue;
      else if (ft === 'lib' && ROUTE_COLLECTORS.includes(from) && isRouteDeclaration(to)) continue;
      else bad.push(`${from} -> ${to}: ${ft}/ may not import ${tt}/${ft === 'job' ? ' outside JOB_LIB' : ''}`);
    }
  }
  // Whatever job/ reaches in lib/ through JOB_LIB is in JOB_LIB too, so the Job never pulls in the rest.
  const seen = new Set<string>();
  const reach = (from: string, path: string) => {
    for (const to of graph.get(path) ?? []) {
      if (treeOf(to) !== 'lib' || seen.has(to)) continue;
      seen.add(to);
      // A job/ module's own import of it is refused above already.
      if (!listed(JOB_LIB, to) && !isContract(to)) {
        if (treeOf(path) !== 'job') bad.push(`${path} -> ${to}: job/ reaches it (from ${from}), but it is not in JOB_LIB`);
      } else reach(from, to);
    }
  };
  for (const from of graph.keys()) if (treeOf(from) === 'job' && !isTestCode(from)) reach(from, from);
  bad.push(...declarationImports(graph));
  return bad;
}

/** A route declaration's imports the rule refuses: anything but its folder's other declaration, its op's contract and DECLARATION_LIB, and whatever those reach outside it. */
export function declarationImports(graph: Map<string, string[]>): string[] {
  const bad: string[] = [];
  const seen = new Set<string>();
  const reach = (from: string, path: string) => {
    for (const to of graph.get(path) ?? []) {
      if (treeOf(to) !== 'lib' || seen.has(to)) continue;
      seen.add(to);
      // An op's contract (functions/<fn>/op.ts) counts as lib/protocol, a declaration too: reachable.
      if (!listed(DECLARATION_LIB, to) && !isContract(to)) bad.push(`${path} -> ${to}: a route declaration reaches it (from ${from}), but it is not in DECLARATION_LIB`);
      else reach(from, to);
    }
  };
  for (const [from, tos] of graph) {
    if (!isRouteDeclaration(from)) continue;
    for (const to of tos) {
      if (isRouteDeclaration(to) && folderOf(to) === folderOf(from)) continue;
      // Its own op's contract (the bounds its schemas share with the Job), counted as lib/protocol.
      if (isContract(to) && functionOf(to) === functionOf(from)) reach(from, to);
      else if (treeOf(to) === 'lib' && listed(DECLARATION_LIB, to)) reach(from, to);
      else bad.push(`${from} -> ${to}: a route declaration imports only its folder's other declaration and DECLARATION_LIB`);
    }
  }
  return bad;
}

/** Imports that break a tree's layer rule, as `from -> to` with the two layers. */
export function upwardImports(graph: Map<string, string[]>): string[] {
  const bad: string[] = [];
  for (const [from, tos] of graph) {
    const tree = treeOf(from);
    if (isTestCode(from) || !LAYERS[tree]) continue;
    const ff = folderOf(from);
    const name = (path: string, folder: string) => (folder === '.' ? path : folder.startsWith('functions/') ? folder : `${tree}/${folder}`);
    for (const to of tos) {
      if (treeOf(to) !== tree || isTestCode(to)) continue;
      const tf = folderOf(to);
      const a = layerOf(from);
      const b = layerOf(to);
      if (a === undefined || b === undefined) {
        bad.push(`${from} -> ${to}: ${name(a === undefined ? from : to, a === undefined ? ff : tf)} has no layer; give it one`);
      } else if ((ff !== tf || (ff === '.' && a !== b)) && b >= a && !Object.hasOwn(ALLOWED_UPWARD, `${from} -> ${to}`)) {
        bad.push(`${from} -> ${to}: ${name(from, ff)} (layer ${a}) may not import ${name(to, tf)} (layer ${b})`);
      }
    }
  }
  return bad;
}

/** Everything wrong with the tree's imports, by kind; all empty when the layering holds. */
export function findings(root: string): { circles: string[]; cross: string[]; upward: string[] } {
  const graph = importGraph(root);
  return {
    circles: circles(graph).map((c) => `import circle: ${c.join(' <-> ')}`),
    cross: crossImports(graph),
    upward: upwardImports(graph),
  };
}

/** Everything wrong with the tree's imports; empty when the layering holds. */
export function checkImports(root: string): string[] {
  const f = findings(root);
  return [...f.circles, ...f.cross, ...f.upward];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const f = findings(root);
  for (const p of [...f.circles, ...f.cross, ...f.upward]) console.log(p);
  const graph = importGraph(root);
  const arrows = [...graph.values()].reduce((n, tos) => n + tos.length, 0);
  console.log(
    `${graph.size} modules, ${arrows} imports (${TREES.join(', ')}): ${f.circles.length} circle(s), ${f.cross.length} refused cross-tree or test-code import(s), ${f.upward.length} upward import(s)`,
  );
  process.exitCode = f.circles.length + f.cross.length + f.upward.length === 0 ? 0 : 1;
}

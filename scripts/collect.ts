/**
 * Writes the collectors of the capability folders: the modules that list every function's routes,
 * schemas and handlers, every op's contract, every op's Job-side run and every op's codec samples,
 * so that adding a capability is adding its folder, functions/<fn>/, and no list elsewhere. Each is
 * a `*.generated.ts` file beside the module that uses it (git ignores them); `npm ci` (prepare),
 * `npm test`, `npm start`, `npm run build` and `npm run typecheck` write them first, and a file is
 * rewritten only when its text changes, so a watcher or tsc sees no change when nothing moved.
 *
 * What is collected is found by name and by one line each, never by running the code (a folder that
 * does not compile is still collected, and tsc then says what is wrong in it):
 *   functions/<fn>/app.ts            `export const <x> = defineFunction('<fn>', …)`: the function
 *   functions/<fn>/routes.ts         `routes` and `prose`: its route table entries (lib/http/routes/table.ts)
 *   functions/<fn>/schemas.ts        `schemas`: their zod schemas (lib/http/routes/schemas.ts)
 *   functions/<fn>/op.ts             each `export const <x> = opContract(…)`: an op (lib/protocol/ops.ts)
 *   functions/<fn>/job/*.ts          `export const runs`: the Job-side run of its ops (job/dispatch/execute.ts)
 *   functions/<fn>/op.test-kit.ts    `samples`: each op's fields its codec must carry (job/program/op-codec.test.ts)
 *   functions/<fn>/e2e.test-kit.ts   `rbac`, `container`, `containerOrder`: its end-to-end scenarios
 *                                    (test/rbac-per-function.e2e.test.ts, test/container/functions.container-test.ts)
 * Folders in byte order of name, and a folder's contracts in the order op.ts declares them: the
 * order of the route table, the OpenAPI document and the op list.
 * @module
 */

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { functionNames, routesExport } from './function-entries.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** `files-copy` → `filesCopy`: a folder's name as an identifier. */
export const identifierOf = (fn: string) => fn.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());

export interface Capability {
  /** The folder's name, functions/<name>/. */
  name: string;
  /** The export of app.ts that defines the function. */
  app: string;
  routes: boolean;
  schemas: boolean;
  /** The contracts op.ts exports, in its order. */
  contracts: string[];
  /** The modules of its job/ that export `runs`, relative to the folder. */
  runs: string[];
  samples: boolean;
  /** What its e2e.test-kit.ts exports of `rbac`, `container` and `containerOrder`. */
  e2e: string[];
}

/** What a function's e2e.test-kit.ts may export, each collected into its own table. */
const E2E_EXPORTS = ['rbac', 'container', 'containerOrder'];

const read = (file: string) => readFileSync(file, 'utf8');
const exportsConst = (source: string, name: string) => new RegExp(`^export const ${name}\\b`, 'm').test(source);

/** What each capability folder under `root`/functions declares, by the names above. */
export function capabilities(root: string = ROOT): Capability[] {
  const fnDir = join(root, 'functions');
  return functionNames(fnDir)
    .sort()
    .map((name) => {
      const dir = join(fnDir, name);
      const at = (f: string) => join(dir, f);
      const jobDir = at('job');
      const jobModules = existsSync(jobDir)
        ? readdirSync(jobDir)
            .filter((f) => f.endsWith('.ts') && !/\.test(-kit)?\.ts$/.test(f))
            .sort()
        : [];
      return {
        name,
        app: routesExport(fnDir, name),
        routes: existsSync(at('routes.ts')),
        schemas: existsSync(at('schemas.ts')),
        contracts: existsSync(at('op.ts')) ? [...read(at('op.ts')).matchAll(/^export const (\w+) = opContract\(/gm)].map((m) => m[1]!) : [],
        runs: jobModules.filter((f) => exportsConst(read(join(jobDir, f)), 'runs')).map((f) => `job/${f}`),
        samples: existsSync(at('op.test-kit.ts')) && exportsConst(read(at('op.test-kit.ts')), 'samples'),
        e2e: existsSync(at('e2e.test-kit.ts')) ? E2E_EXPORTS.filter((x) => exportsConst(read(at('e2e.test-kit.ts')), x)) : [],
      };
    });
}

const HEADER = '// Written by scripts/collect.ts from the folders under functions/; do not edit (git ignores it).\n';

/** The path of functions/<fn>/<file> as an import from `from` (a repo-relative file). */
function importPath(root: string, from: string, fn: string, file: string): string {
  const p = relative(join(root, from, '..'), join(root, 'functions', fn, file))
    .split('\\')
    .join('/');
  return p.startsWith('.') ? p : `./${p}`;
}

/** Each generated file: its repo-relative path and its text. */
export function generatedFiles(caps: Capability[], root: string = ROOT): Map<string, string> {
  const out = new Map<string, string>();
  const imp = (from: string, fn: string, file: string) => importPath(root, from, fn, file);

  const apps = 'functions/apps.generated.ts';
  out.set(
    apps,
    HEADER +
      "import type { RouteModule } from '../lib/http/serve.ts';\n" +
      caps.map((c) => `import { ${c.app} as ${identifierOf(c.name)} } from '${imp(apps, c.name, 'app.ts')}';\n`).join('') +
      `\nexport const APPS: Record<string, RouteModule> = {\n${caps.map((c) => `  '${c.name}': ${identifierOf(c.name)},\n`).join('')}};\n`,
  );

  const routed = caps.filter((c) => c.routes);
  const table = 'lib/http/routes/table.generated.ts';
  out.set(
    table,
    HEADER +
      routed.map((c) => `import * as ${identifierOf(c.name)} from '${imp(table, c.name, 'routes.ts')}';\n`).join('') +
      "import type { ProseTable, RouteTable } from './types.ts';\n\n" +
      `export const ROUTES = {\n${routed.map((c) => `  ...${identifierOf(c.name)}.routes,\n`).join('')}} as const satisfies RouteTable;\n\n` +
      // Pure: only the document generators read the prose, so a function bundle drops it.
      `export const ROUTE_PROSE: ProseTable<typeof ROUTES> = /* @__PURE__ */ Object.assign(\n  {},\n${routed.map((c) => `  ${identifierOf(c.name)}.prose,\n`).join('')});\n`,
  );

  const schemaOwners = caps.filter((c) => c.schemas);
  const schemas = 'lib/http/routes/schemas.generated.ts';
  out.set(
    schemas,
    HEADER +
      schemaOwners.map((c) => `import { schemas as ${identifierOf(c.name)} } from '${imp(schemas, c.name, 'schemas.ts')}';\n`).join('') +
      "import type { ROUTES } from './table.generated.ts';\nimport type { SchemaTable } from './types.ts';\n\n" +
      `export const SCHEMAS = {\n${schemaOwners.map((c) => `  ...${identifierOf(c.name)},\n`).join('')}} as const satisfies SchemaTable<typeof ROUTES>;\n`,
  );

  const withOps = caps.filter((c) => c.contracts.length > 0);
  const contracts = 'lib/protocol/contracts.generated.ts';
  out.set(
    contracts,
    HEADER +
      withOps.map((c) => `import * as ${identifierOf(c.name)} from '${imp(contracts, c.name, 'op.ts')}';\n`).join('') +
      `\nexport const CONTRACTS = [\n${withOps.flatMap((c) => c.contracts.map((x) => `  ${identifierOf(c.name)}.${x},\n`)).join('')}] as const;\n`,
  );

  const runs = 'job/dispatch/runs.generated.ts';
  const runModules = caps.flatMap((c) => c.runs.map((m, i) => ({ fn: c.name, file: m, id: `${identifierOf(c.name)}${i || ''}` })));
  out.set(
    runs,
    HEADER + runModules.map((r) => `import { runs as ${r.id} } from '${imp(runs, r.fn, r.file)}';\n`).join('') + `\nexport const RUNS = {\n${runModules.map((r) => `  ...${r.id},\n`).join('')}};\n`,
  );

  const sampled = caps.filter((c) => c.samples);
  const samples = 'job/program/op-samples.generated.test-kit.ts';
  out.set(
    samples,
    HEADER +
      sampled.map((c) => `import { samples as ${identifierOf(c.name)} } from '${imp(samples, c.name, 'op.test-kit.ts')}';\n`).join('') +
      `\nexport const SAMPLES = {\n${sampled.map((c) => `  ...${identifierOf(c.name)},\n`).join('')}};\n`,
  );

  const kits = caps.filter((c) => c.e2e.length > 0);
  const e2e = 'test/support/function-e2e.generated.test-kit.ts';
  // Keyed by function, in the folders' order; the tests check the keys against every function.
  const e2eTable = (name: string, type: string, x: string) =>
    `\nexport const ${name}: Record<string, ${type}> = {\n${kits
      .filter((c) => c.e2e.includes(x))
      .map((c) => `  '${c.name}': ${identifierOf(c.name)}.${x},\n`)
      .join('')}};\n`;
  out.set(
    e2e,
    HEADER +
      kits.map((c) => `import * as ${identifierOf(c.name)} from '${imp(e2e, c.name, 'e2e.test-kit.ts')}';\n`).join('') +
      "import type { ContainerCall, Place, RbacScenario } from './function-e2e.ts';\n" +
      e2eTable('RBAC_SCENARIOS', 'RbacScenario', 'rbac') +
      e2eTable('CONTAINER_CALLS', 'ContainerCall[]', 'container') +
      e2eTable('CONTAINER_ORDER', 'Place', 'containerOrder'),
  );
  return out;
}

/** Writes the generated files that changed; answers their paths. */
export function collect(root: string = ROOT): string[] {
  const written: string[] = [];
  for (const [path, text] of generatedFiles(capabilities(root), root)) {
    const file = join(root, path);
    // A tree without that part has nothing to feed it: the image's build context holds no test/.
    if (!existsSync(dirname(file))) continue;
    if (existsSync(file) && read(file) === text) continue;
    writeFileSync(file, text);
    written.push(path);
  }
  return written;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const written = collect();
  if (written.length) console.log(`collect: wrote ${written.join(', ')}`);
}

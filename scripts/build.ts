/**
 * Bundles each function and the Job program into dist/ with esbuild: one self-contained ESM file
 * each, dependencies included, so a container needs only `node` and the file.
 *   dist/felis.mjs                 the Job program (`felis files ...`), executable (`#!/usr/bin/env node`)
 *   dist/functions/<name>.mjs      one per Knative service (its entry generated: function-entries.ts)
 *   dist/functions/chunks/*.mjs    code the functions share, loaded on demand (client-node among it)
 *   dist/functions/docs-assets/    the API document and the Swagger UI files /openapi.json and /docs serve (lib/http/api-docs.ts)
 *   dist/image-compile-cache.mjs   run once while the image is built, to fill Node's compile cache
 *   dist/wasm/*.wasm               the WebAssembly modules of the archive codecs (job/archive/wasm.ts finds them)
 */

import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build, type Plugin } from 'esbuild';
import { SEVEN_ZIP_GLUE, sevenZipGluePath, WASM_MODULES, type WasmModule, wasmPath } from '../job/archive/wasm.ts';
import { DOCS_ASSETS_DIR, OPENAPI_DOCUMENT, SWAGGER_UI_FILES } from '../lib/http/api-docs.ts';
import { collect } from './collect.ts';
import { applyEdits, shiftMappings, wrapperEdits } from './eager-wrappers.ts';
import { entryPoints, functionEntries, functionNames } from './function-entries.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

// Bundled CommonJS dependencies (pino, js-yaml) call require() for Node built-ins; ESM has none.
const banner = { js: "import { createRequire as __felisCreateRequire } from 'node:module'; const require = __felisCreateRequire(import.meta.url);" };

/** The options every bundle shares (the bench bundles its bare-Hono floor with them too). */
export const common: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'esm',
  banner,
  sourcemap: 'linked',
  legalComments: 'none',
  logLevel: 'warning',
};

/** The Job program alone: what the embedded kubelet runs (`npm start`, tests, bench). */
export async function buildJobProgram(): Promise<void> {
  const outfile = join(root, 'dist/felis.mjs');
  // The image installs it as /usr/local/bin/felis, the command the file Jobs run.
  await build({ ...common, banner: { js: `#!/usr/bin/env node\n${banner.js}` }, entryPoints: [join(root, 'job/main.ts')], outfile });
  chmodSync(outfile, 0o755);
  copyWasmModules();
}

/** Copies the codecs' WebAssembly modules to dist/wasm/, beside the Job program that loads them. */
export function copyWasmModules(): void {
  const to = join(root, 'dist/wasm');
  mkdirSync(to, { recursive: true });
  for (const name of Object.keys(WASM_MODULES) as WasmModule[]) copyFileSync(wasmPath(name, {}), join(to, name));
  copyFileSync(sevenZipGluePath({}), join(to, SEVEN_ZIP_GLUE));
}

/** Copies the API document and the Swagger UI files beside the function bundles, where the bundled /openapi.json and /docs read them. */
export function copyDocsAssets(): void {
  const from = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const to = join(root, 'dist/functions', DOCS_ASSETS_DIR);
  mkdirSync(to, { recursive: true });
  for (const f of Object.keys(SWAGGER_UI_FILES)) copyFileSync(join(from, f), join(to, f));
  copyFileSync(join(root, 'docs', OPENAPI_DOCUMENT), join(to, OPENAPI_DOCUMENT));
}

const CLIENT_NODE = '/node_modules/@kubernetes/client-node/';

/**
 * client-node's own modules, marked free of side effects: its package index re-exports every part
 * (exec, attach, port-forward, cp...), and without the mark the bundler keeps them and the
 * libraries they load (ws, tar-fs), which each woken function would evaluate before its first
 * request. Its generated models stay: the serializer reaches them all. The package's entry is
 * resolved by esbuild itself (its exports map), then marked; its own imports are relative, with
 * full file names (`./x.js`), so they are joined here without a second resolve per file.
 */
export const clientNodeWithoutSideEffects: Plugin = {
  name: 'client-node-without-side-effects',
  setup(b) {
    b.onResolve({ filter: /^@kubernetes\/client-node$/ }, async (args) => {
      if (args.pluginData === CLIENT_NODE) return undefined;
      const r = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: CLIENT_NODE });
      return r.errors.length ? r : { ...r, sideEffects: false };
    });
    b.onResolve({ filter: /^\.\.?\/.*\.js$/ }, (args) => {
      if (!args.importer.includes(CLIENT_NODE)) return undefined;
      const path = join(args.resolveDir, args.path);
      return existsSync(path) ? { path, sideEffects: false } : undefined;
    });
  },
};

/**
 * Every function bundle and chunk with its module wrappers compiled as the file loads, so the
 * image's compile cache holds them (see eager-wrappers.ts); each source map shifted to match.
 */
export function eagerModuleWrappers(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || !e.name.endsWith('.mjs')) continue;
    const file = join(e.parentPath, e.name);
    const code = readFileSync(file, 'utf8');
    const edits = wrapperEdits(code);
    if (!edits.length) continue;
    writeFileSync(file, applyEdits(code, edits));
    if (existsSync(`${file}.map`)) {
      const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { mappings: string };
      map.mappings = shiftMappings(map.mappings, code, edits);
      writeFileSync(`${file}.map`, JSON.stringify(map));
    }
  }
}

export async function buildAll(): Promise<string[]> {
  // The collectors first: a folder added since the last run is bundled with the others.
  collect(root);
  const fnDir = join(root, 'functions');
  const functions = functionNames(fnDir);
  // Chunk names carry content hashes: clear the old ones, or the image would ship them too.
  rmSync(join(root, 'dist/functions'), { recursive: true, force: true });
  await Promise.all([
    buildJobProgram(),
    build({ ...common, entryPoints: [join(root, 'scripts/image-compile-cache.ts')], outfile: join(root, 'dist/image-compile-cache.mjs') }),
    // One build for all functions: client-node is parsed once, not once per service.
    build({
      ...common,
      // Each entry generated from the function's name (function-entries.ts).
      entryPoints: entryPoints(functions),
      outdir: join(root, 'dist/functions'),
      outExtension: { '.js': '.mjs' },
      // Splitting turns the dynamic import of client-node into a chunk of its own, so a function's
      // entry file (what must load before /healthz answers) holds only Hono and our code.
      splitting: true,
      chunkNames: 'chunks/[name]-[hash]',
      minify: true,
      plugins: [functionEntries(fnDir), clientNodeWithoutSideEffects],
    }),
  ]);
  eagerModuleWrappers(join(root, 'dist/functions'));
  copyDocsAssets();
  return ['felis', ...functions];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t = performance.now();
  const built = await buildAll();
  console.log(`built ${built.length} bundles into dist/ in ${Math.round(performance.now() - t)} ms: ${built.join(', ')}`);
}

/**
 * Bundles each function and the Job program into dist/ with esbuild: one self-contained ESM file
 * each, dependencies included, so a container needs only `node` and the file.
 *   dist/felis.mjs                 the Job program (`felis files ...`)
 *   dist/functions/<name>.mjs      one per Knative service
 */
import { build, type BuildOptions } from 'esbuild';
import { readdirSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const root = fileURLToPath(new URL('..', import.meta.url));

// Bundled CommonJS dependencies (pino, js-yaml) call require() for Node built-ins; ESM has none.
const banner = { js: "import { createRequire as __felisCreateRequire } from 'node:module'; const require = __felisCreateRequire(import.meta.url);" };

const common: BuildOptions = {
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
  await build({ ...common, entryPoints: [join(root, 'job/main.ts')], outfile: join(root, 'dist/felis.mjs') });
}

export async function buildAll(): Promise<string[]> {
  const fnDir = join(root, 'functions');
  const functions = readdirSync(fnDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(fnDir, d.name, 'main.ts')))
    .map((d) => d.name);
  await Promise.all([
    buildJobProgram(),
    // One build for all functions: client-node is parsed once, not once per service.
    build({
      ...common,
      entryPoints: Object.fromEntries(functions.map((f) => [f, join(fnDir, f, 'main.ts')])),
      outdir: join(root, 'dist/functions'),
      outExtension: { '.js': '.mjs' },
      minify: true,
    }),
  ]);
  return ['felis', ...functions];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t = performance.now();
  const built = await buildAll();
  console.log(`built ${built.length} bundles into dist/ in ${Math.round(performance.now() - t)} ms: ${built.join(', ')}`);
}

/**
 * The function bundles' entries, generated at build time instead of a main.ts per function: each
 * is `serveFunction('<name>', …)` (lib/http/serve.ts), which listens first and imports the
 * function's routes, `functions/<name>/app.ts`, only after, so the entry file stays small. An
 * esbuild plugin serves them as the virtual modules `function-entry:<name>`; each is still its own
 * entry point, so every function keeps its own bundle, `dist/functions/<name>.mjs`.
 * @module
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Plugin } from 'esbuild';

const PREFIX = 'function-entry:';

/** The function folders under `fnDir`: those with an app.ts. */
export function functionNames(fnDir: string): string[] {
  return readdirSync(fnDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(fnDir, d.name, 'app.ts')))
    .map((d) => d.name);
}

/** The export of `functions/<name>/app.ts` that defines its routes: `export const x = defineFunction('<name>', …)`, exactly one. */
export function routesExport(fnDir: string, name: string): string {
  const source = readFileSync(join(fnDir, name, 'app.ts'), 'utf8');
  const found = [...source.matchAll(/^export const (\w+) = defineFunction\(\s*'([\w-]+)'/gm)];
  if (found.length !== 1 || found[0]![2] !== name) {
    throw new Error(`functions/${name}/app.ts must export exactly one \`export const <x> = defineFunction('${name}', …)\`; found ${found.map((m) => `${m[1]} ('${m[2]}')`).join(', ') || 'none'}`);
  }
  return found[0]![1]!;
}

/** The entry's source, resolved from functions/<name>/. */
export function entrySource(name: string, exportName: string): string {
  return `import { serveFunction } from '../../lib/http/serve.ts';\n\nserveFunction(${JSON.stringify(name)}, async () => (await import('./app.ts')).${exportName});\n`;
}

/** esbuild's entry points for the functions: `{ <name>: 'function-entry:<name>' }`, for {@link functionEntries}. */
export const entryPoints = (names: string[]) => Object.fromEntries(names.map((n) => [n, PREFIX + n]));

/** Serves `function-entry:<name>` as {@link entrySource}, from the function's folder. */
export function functionEntries(fnDir: string): Plugin {
  return {
    name: 'function-entries',
    setup(b) {
      b.onResolve({ filter: /^function-entry:/ }, (args) => ({ path: args.path.slice(PREFIX.length), namespace: 'function-entry' }));
      b.onLoad({ filter: /.*/, namespace: 'function-entry' }, (args) => ({
        contents: entrySource(args.path, routesExport(fnDir, args.path)),
        resolveDir: join(fnDir, args.path),
        loader: 'ts',
      }));
    },
  };
}

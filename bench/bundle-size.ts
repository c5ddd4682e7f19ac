/**
 * How much a function bundle weighs: its entry file, the chunks it imports statically (all of which
 * load before it can answer /healthz), and everything it may load later through dynamic imports.
 * @module
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export interface BundleWeight {
  /** Entry plus its static imports, transitively: the start-up path. */
  startupBytes: number;
  /** Everything reachable, static or dynamic. */
  totalBytes: number;
}

// esbuild's minified ESM output: `from"./x.mjs"`, `import"./x.mjs"`, `import("./x.mjs")`.
const STATIC = /(?:from|import)\s*["'](\.\.?\/[^"']+\.mjs)["']/g;
const DYNAMIC = /import\(\s*["'](\.\.?\/[^"']+\.mjs)["']\s*\)/g;

export function bundleWeight(entry: string): BundleWeight {
  const walk = (start: string, follow: RegExp[]) => {
    const seen = new Set<string>();
    const todo = [resolve(start)];
    while (todo.length) {
      const f = todo.pop()!;
      if (seen.has(f)) continue;
      seen.add(f);
      const text = readFileSync(f, 'utf8');
      for (const re of follow) for (const m of text.matchAll(re)) todo.push(resolve(dirname(f), m[1]!));
    }
    return [...seen].reduce((n, f) => n + statSync(f).size, 0);
  };
  return { startupBytes: walk(entry, [STATIC]), totalBytes: walk(entry, [STATIC, DYNAMIC]) };
}

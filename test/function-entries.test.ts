/**
 * The generated function entries (scripts/function-entries.ts): one per function the code serves,
 * each serving that function's routes under its own name. test/bundles.e2e.test.ts starts the
 * built bundles themselves.
 */

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FUNCTIONS } from '../functions/index.ts';
import { entrySource, functionNames, routesExport } from '../scripts/function-entries.ts';
import { ROOT } from './support/stack.ts';

const FN_DIR = join(ROOT, 'functions');

test('an entry is generated for every function the code serves, and only for those', () => {
  assert.deepEqual(functionNames(FN_DIR).sort(), Object.keys(FUNCTIONS).sort());
});

test("each entry serves its function's own routes, under its name", async () => {
  for (const name of functionNames(FN_DIR)) {
    const exportName = routesExport(FN_DIR, name);
    const app = (await import(join(FN_DIR, name, 'app.ts'))) as Record<string, unknown>;
    assert.equal(app[exportName], FUNCTIONS[name], `${name}: ${exportName}`);
    assert.match(entrySource(name, exportName), new RegExp(`serveFunction\\("${name}", async \\(\\) => \\(await import\\('\\./app\\.ts'\\)\\)\\.${exportName}\\)`));
  }
});

test('an app.ts without exactly one defineFunction of its own name is refused, not guessed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'felis-entries-'));
  try {
    const app = (name: string, source: string) => {
      mkdirSync(join(dir, name));
      writeFileSync(join(dir, name, 'app.ts'), source);
    };
    app('none', 'export const x = 1;\n');
    app('other', "export const a = defineFunction('holder', () => ({}));\n");
    app('two', "export const a = defineFunction('two', () => ({}));\nexport const b = defineFunction('two', () => ({}));\n");
    app('multiline', "export const routes = defineFunction(\n  'multiline',\n  () => ({}),\n);\n");
    for (const name of ['none', 'other', 'two']) assert.throws(() => routesExport(dir, name), /must export exactly one/, name);
    assert.equal(routesExport(dir, 'multiline'), 'routes');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * knative/functions/ is one base and a few shapes plus a folder per function: the folder's
 * function.yaml holds the function's Role and what its Knative Service sets apart, and the shapes
 * it lists and the base add the rest with patches. A patch replaces a value already there, so a
 * field a function.yaml set that a shape or the base also sets would be lost without a word; this
 * checks that every value a function.yaml writes is in the rendered object unchanged, and that
 * the folders, the list in functions/kustomization.yaml and the functions the code bundles are the
 * same set (the cluster tier finds the functions' identities by their folders).
 */

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { load, loadAll } from 'js-yaml';
import { FUNCTIONS } from '../functions/index.ts';
import { type Obj, render } from './support/kustomize.ts';
import { ROOT } from './support/stack.ts';

const FUNCTIONS_DIR = join(ROOT, 'knative', 'functions');
const objs = render(join(ROOT, 'knative'), { components: [] });

/** Where `part` differs from `whole`: every key of a map must be there, lists must match item by item. */
function missing(part: unknown, whole: unknown, path = ''): string[] {
  if (Array.isArray(part)) {
    if (!Array.isArray(whole) || whole.length !== part.length) return [`${path}: ${JSON.stringify(whole)}, not ${JSON.stringify(part)}`];
    return part.flatMap((p, i) => missing(p, whole[i], `${path}[${i}]`));
  }
  if (part !== null && typeof part === 'object') {
    if (whole === null || typeof whole !== 'object' || Array.isArray(whole)) return [`${path}: ${JSON.stringify(whole)}, not a map`];
    return Object.entries(part).flatMap(([k, v]) => missing(v, (whole as Record<string, unknown>)[k], `${path}.${k}`));
  }
  return Object.is(part, whole) ? [] : [`${path}: ${JSON.stringify(whole)}, not ${JSON.stringify(part)}`];
}

const folders = readdirSync(FUNCTIONS_DIR, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(FUNCTIONS_DIR, d.name, 'function.yaml')))
  .map((d) => d.name);

test('the function folders, the list in functions/kustomization.yaml and the bundled functions are the same', () => {
  const listed = (load(readFileSync(join(FUNCTIONS_DIR, 'kustomization.yaml'), 'utf8')) as { resources: string[] }).resources;
  assert.deepEqual([...folders].sort(), Object.keys(FUNCTIONS).sort());
  assert.deepEqual([...listed].sort(), [...folders].sort());
});

test("what each function.yaml writes is rendered unchanged: the shapes and the base add to a function's Role and Service, never over them", () => {
  assert.ok(folders.length > 0);
  for (const fn of folders) {
    const own = loadAll(readFileSync(join(FUNCTIONS_DIR, fn, 'function.yaml'), 'utf8')) as Obj[];
    assert.deepEqual(own.map((o) => o.kind).sort(), ['Role', 'Service'], fn);
    for (const o of own) {
      const rendered = objs.find((r) => r.apiVersion === o.apiVersion && r.kind === o.kind && r.metadata.name === o.metadata.name);
      assert.ok(rendered, `${fn}: ${o.kind} ${o.metadata.name} is rendered`);
      assert.deepEqual(missing(o, rendered), [], `${fn}: ${o.kind} ${o.metadata.name}`);
    }
  }
});

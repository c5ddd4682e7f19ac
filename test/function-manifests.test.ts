/**
 * Each function's manifest is in its folder functions/<fn>/, next to its code: function.yaml holds
 * the function's Role and what its Knative Service sets apart, and its kustomization.yaml lists it
 * with the shapes and the base of knative/functions/, which add the rest with patches. A patch
 * replaces a value already there, so a field a function.yaml set that a shape or the base also sets
 * would be lost without a word; this checks that every value a function.yaml writes is in the
 * rendered object unchanged, and that the function folders (those with an app.ts, which the code
 * bundles), the folders with a manifest and the list in knative/functions/kustomization.yaml are the
 * same set (a function left out of the list would build and never deploy; the cluster tier finds
 * the functions' identities by their function.yaml).
 */

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { load, loadAll } from 'js-yaml';
import { FUNCTIONS } from '../functions/index.ts';
import { type Obj, render } from './support/kustomize.ts';
import { ROOT } from './support/stack.ts';

const FUNCTIONS_DIR = join(ROOT, 'functions');
/** knative/functions/: the shapes, the base, the job key and the list of the function folders. */
const SHARED_DIR = join(ROOT, 'knative', 'functions');
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

const subfolders = (dir: string) =>
  readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
/** The function folders: those with an app.ts. */
const functionFolders = subfolders(FUNCTIONS_DIR).filter((d) => existsSync(join(FUNCTIONS_DIR, d, 'app.ts')));
const folders = subfolders(FUNCTIONS_DIR).filter((d) => existsSync(join(FUNCTIONS_DIR, d, 'function.yaml')));

test('every function folder holds its manifest: function.yaml and the kustomization.yaml that lists it', () => {
  assert.ok(functionFolders.length > 0);
  for (const fn of functionFolders) {
    assert.ok(existsSync(join(FUNCTIONS_DIR, fn, 'function.yaml')), `functions/${fn}/function.yaml`);
    const k = join(FUNCTIONS_DIR, fn, 'kustomization.yaml');
    assert.ok(existsSync(k), `functions/${fn}/kustomization.yaml`);
    assert.ok((load(readFileSync(k, 'utf8')) as { resources?: string[] }).resources?.includes('function.yaml'), `functions/${fn}/kustomization.yaml lists function.yaml`);
  }
  assert.deepEqual([...folders].sort(), [...functionFolders].sort(), 'a function.yaml only in a function folder');
  assert.deepEqual(
    subfolders(SHARED_DIR).filter((d) => existsSync(join(SHARED_DIR, d, 'function.yaml'))),
    [],
    "knative/functions/ holds what functions share, no function's own folder",
  );
});

test('knative/functions/kustomization.yaml lists exactly the function folders, and they are the bundled functions', () => {
  const listed = (load(readFileSync(join(SHARED_DIR, 'kustomization.yaml'), 'utf8')) as { resources: string[] }).resources;
  assert.deepEqual([...functionFolders].sort(), Object.keys(FUNCTIONS).sort());
  assert.deepEqual([...listed].sort(), functionFolders.map((fn) => `../../functions/${fn}`).sort());
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

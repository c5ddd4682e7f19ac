import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkImports, circles, crossImports, importGraph, isTestCode, LAYERS, modulesUnder, upwardImports } from '../scripts/check-imports.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

test('the whole tree has no import circle, type-only imports included, every import runs down its layers and crosses trees only as allowed', () => {
  assert.deepEqual(checkImports(root), []);
});

test('every lib/, job/ and cluster/ folder with production modules has a layer', () => {
  for (const tree of ['lib', 'job', 'cluster']) {
    const folders = new Set(
      [...importGraph(root).keys()]
        .filter((p) => p.startsWith(`${tree}/`) && !isTestCode(p))
        .map((p) => p.split('/'))
        .filter((p) => p.length > 2)
        .map((p) => p[1]),
    );
    for (const f of folders) assert.ok(Object.hasOwn(LAYERS[tree], f), `${tree}/${f} has no layer`);
  }
});

/** A throwaway tree of modules, to see the check fail. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'layering-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

test('a circle closed only by type imports is found', () => {
  const dir = tree({
    'lib/files/a.ts': "import type { B } from './b.ts';\nexport type A = B;\n",
    'lib/files/b.ts': "export type { A } from './a.ts';\nexport interface B { x: 1 }\n",
    'lib/files/c.ts': "import { x } from './d.ts';\n",
    'lib/files/d.ts': 'export const x = 1;\n',
  });
  try {
    assert.deepEqual(circles(importGraph(dir)), [['lib/files/a.ts', 'lib/files/b.ts']]);
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('an import up the layers is refused (a domain folder importing lib/http), one down is not', () => {
  const dir = tree({
    'lib/http/envelope.ts': "import { x } from '../uploads/u.ts';\nexport const y = x;\n",
    'lib/uploads/u.ts': 'export const x = 1;\n',
    'lib/downloads/d.ts': "import type { y } from '../http/envelope.ts';\n",
    'lib/kube/k.ts': "import {\n  x,\n} from '../maintenance/m.ts';\n",
    'lib/maintenance/m.ts': 'export const x = 1;\n',
    'lib/maintenance/m.test.ts': "import '../http/envelope.ts';\n",
  });
  try {
    assert.deepEqual(upwardImports(importGraph(dir)), [
      'lib/downloads/d.ts -> lib/http/envelope.ts: lib/downloads (layer 7) may not import lib/http (layer 9)',
      'lib/kube/k.ts -> lib/maintenance/m.ts: lib/kube (layer 1) may not import lib/maintenance (layer 6)',
    ]);
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('a folder without a layer is named', () => {
  const dir = tree({ 'lib/newthing/n.ts': "import '../kube/k.ts';\n", 'lib/kube/k.ts': '' });
  try {
    assert.deepEqual(upwardImports(importGraph(dir)), ['lib/newthing/n.ts -> lib/kube/k.ts: lib/newthing has no layer; give it one']);
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('in job/, a floor may not import the ops above it, nor a top-level file of the cluster the assembled cluster', () => {
  const dir = tree({
    'job/runtime/types.ts': "import type { S } from '../../functions/files-pull/job/pull.ts';\n",
    'functions/files-pull/job/pull.ts': "import type { T } from '../../../job/runtime/types.ts';\nexport type S = 1;\n",
    'job/dispatch/execute.ts': "import '../../functions/files-pull/job/pull.ts';\n",
    'cluster/store.ts': "import './index.ts';\n",
    'cluster/index.ts': "import './store.ts';\n",
  });
  try {
    assert.deepEqual(upwardImports(importGraph(dir)), [
      'cluster/store.ts -> cluster/index.ts: cluster/store.ts (layer 0) may not import cluster/index.ts (layer 5)',
      'job/runtime/types.ts -> functions/files-pull/job/pull.ts: job/runtime (layer 2) may not import functions/files-pull/job (layer 6)',
    ]);
    assert.equal(circles(importGraph(dir)).length, 2);
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('across trees: job/ only into JOB_LIB and what it reaches, functions/ into lib/, lib/ nowhere, and no production module into test code', () => {
  const dir = tree({
    'job/ops/a.ts': "import '../../lib/protocol/p.ts';\nimport '../../lib/http/h.ts';\nimport './a.test-kit.ts';\n",
    'job/ops/a.test-kit.ts': "import '../../lib/http/h.ts';\nimport '../../scripts/build.ts';\n",
    'job/ops/a.test.ts': "import '../../functions/f/app.ts';\n",
    'lib/protocol/p.ts': "import '../kube/k.ts';\n",
    'lib/kube/k.ts': '',
    'lib/http/h.ts': "import '../testing/kit.ts';\nimport '../../functions/f/app.ts';\n",
    'lib/testing/kit.ts': '',
    'functions/f/app.ts': "import '../../lib/http/h.ts';\nimport '../../job/ops/a.ts';\n",
    'scripts/build.ts': "import '../test/support/s.ts';\n",
    'test/support/s.ts': "import '../../cluster/c.ts';\n",
    'cluster/c.ts': "import '../lib/kube/connections.ts';\n",
    'lib/kube/connections.ts': '',
  });
  try {
    assert.deepEqual(crossImports(importGraph(dir)), [
      'functions/f/app.ts -> job/ops/a.ts: functions/ may not import job/',
      'job/ops/a.ts -> job/ops/a.test-kit.ts: production code may not import test code',
      'job/ops/a.ts -> lib/http/h.ts: job/ may not import lib/ outside JOB_LIB',
      'lib/http/h.ts -> functions/f/app.ts: lib/ may not import functions/',
      'lib/http/h.ts -> lib/testing/kit.ts: production code may not import test code',
      'lib/protocol/p.ts -> lib/kube/k.ts: job/ reaches it (from job/ops/a.ts), but it is not in JOB_LIB',
    ]);
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('lib/ reaches functions/ only from the route collectors into the route declarations, and a declaration imports only declarations and its own op', () => {
  const dir = tree({
    'lib/http/routes/table.generated.ts': "import '../../../functions/f/routes.ts';\nimport '../../../functions/f/app.ts';\n",
    'lib/http/routes/schemas.generated.ts': "import '../../../functions/f/schemas.ts';\n",
    'lib/http/routes/register.ts': "import '../../../functions/f/routes.ts';\n",
    'lib/http/routes/types.ts': "import '../../protocol/limits.ts';\n",
    'lib/http/routes/common-schemas.ts': "import '../../schema.ts';\nimport '../serve.ts';\n",
    'lib/protocol/limits.ts': '',
    'lib/schema.ts': '',
    'lib/http/serve.ts': '',
    'functions/f/routes.ts': "import '../../lib/http/routes/types.ts';\nimport './app.ts';\nimport '../g/routes.ts';\n",
    'functions/f/schemas.ts': "import './routes.ts';\nimport '../../lib/http/routes/common-schemas.ts';\nimport '../../lib/http/routes/register.ts';\nimport './op.ts';\nimport '../g/op.ts';\n",
    'functions/f/op.ts': '',
    'functions/f/app.ts': '',
    'functions/g/routes.ts': '',
    'functions/g/op.ts': '',
  });
  try {
    assert.deepEqual(crossImports(importGraph(dir)), [
      "functions/f/routes.ts -> functions/g/routes.ts: functions/f/ may not import another function's folder",
      "functions/f/schemas.ts -> functions/g/op.ts: functions/f/ may not import another function's folder",
      'lib/http/routes/register.ts -> functions/f/routes.ts: lib/ may not import functions/',
      'lib/http/routes/table.generated.ts -> functions/f/app.ts: lib/ may not import functions/',
      "functions/f/routes.ts -> functions/f/app.ts: a route declaration imports only its folder's other declaration and DECLARATION_LIB",
      "functions/f/routes.ts -> functions/g/routes.ts: a route declaration imports only its folder's other declaration and DECLARATION_LIB",
      "functions/f/schemas.ts -> functions/g/op.ts: a route declaration imports only its folder's other declaration and DECLARATION_LIB",
      'lib/http/routes/common-schemas.ts -> lib/http/serve.ts: a route declaration reaches it (from functions/f/schemas.ts), but it is not in DECLARATION_LIB',
      "functions/f/schemas.ts -> lib/http/routes/register.ts: a route declaration imports only its folder's other declaration and DECLARATION_LIB",
    ]);
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test("a function's folder: op.ts imports only lib/protocol, job/ is Job code on its floor, and no folder imports another function's", () => {
  const dir = tree({
    'lib/protocol/ops.ts': "import '../../functions/files-a/op.ts';\n",
    'lib/protocol/c.ts': '',
    'lib/errors.ts': '',
    'functions/files-a/op.ts': "import '../../lib/protocol/c.ts';\nimport '../../lib/errors.ts';\n",
    'functions/files-a/app.ts': "import './op.ts';\nimport './job/a.ts';\n",
    'functions/files-a/job/a.ts':
      "import '../op.ts';\nimport '../../../lib/protocol/ops.ts';\nimport '../../../job/op-kit/k.ts';\nimport '../../files-b/job/b.ts';\nimport '../../files-b/op.ts';\nimport '../../../job/dispatch/d.ts';\n",
    'functions/files-a/job/a.test.ts': "import '../../files-b/job/b.ts';\n",
    'functions/files-b/op.ts': '',
    'functions/files-b/job/b.ts': '',
    'job/op-kit/k.ts': "import '../../functions/files-b/job/b.ts';\n",
    'job/dispatch/d.ts': "import '../../functions/files-b/job/b.ts';\n",
  });
  try {
    const graph = importGraph(dir);
    assert.deepEqual(crossImports(graph), [
      'functions/files-a/app.ts -> functions/files-a/job/a.ts: functions/ may not import job/',
      "functions/files-a/job/a.ts -> functions/files-b/job/b.ts: functions/files-a/ may not import another function's folder",
      "functions/files-a/job/a.ts -> functions/files-b/op.ts: functions/files-a/ may not import another function's folder",
      'functions/files-a/op.ts -> lib/errors.ts: a contract (op.ts) imports only lib/protocol/',
    ]);
    assert.deepEqual(upwardImports(graph), [
      'functions/files-a/job/a.ts -> functions/files-b/job/b.ts: functions/files-a/job (layer 6) may not import functions/files-b/job (layer 6)',
      'functions/files-a/job/a.ts -> job/dispatch/d.ts: functions/files-a/job (layer 6) may not import job/dispatch (layer 8)',
      'job/op-kit/k.ts -> functions/files-b/job/b.ts: job/op-kit (layer 5) may not import functions/files-b/job (layer 6)',
    ]);
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test("an op's decoder (result.ts) counts as lib/files: the editor may import it, the Job program may not, and it imports only lib/protocol, lib/files and its op's contract", () => {
  const dir = tree({
    'lib/files/editor.ts': "import '../../functions/files-a/result.ts';\n",
    'lib/files/result-check.ts': "import '../protocol/result.ts';\n",
    'lib/protocol/result.ts': '',
    'lib/kube/k.ts': "import '../../functions/files-a/result.ts';\n",
    'lib/http/h.ts': '',
    'functions/files-a/result.ts': "import '../../lib/files/result-check.ts';\nimport '../../lib/protocol/result.ts';\nimport '../../lib/http/h.ts';\nimport './op.ts';\n",
    'functions/files-a/op.ts': '',
    'functions/files-a/app.ts': "import './result.ts';\n",
    'functions/files-b/app.ts': "import '../files-a/result.ts';\n",
    'job/dispatch/d.ts': "import '../../functions/files-a/result.ts';\n",
  });
  try {
    const graph = importGraph(dir);
    assert.deepEqual(crossImports(graph), [
      "functions/files-a/result.ts -> lib/http/h.ts: a decoder (result.ts) imports only lib/protocol/, lib/files/ and its op's contract",
      "functions/files-b/app.ts -> functions/files-a/result.ts: functions/files-b/ may not import another function's folder",
      'job/dispatch/d.ts -> functions/files-a/result.ts: job/ may not import lib/ outside JOB_LIB',
    ]);
    assert.deepEqual(upwardImports(graph), [
      'functions/files-a/result.ts -> lib/http/h.ts: lib/files (layer 5) may not import lib/http (layer 9)',
      'lib/kube/k.ts -> functions/files-a/result.ts: lib/kube (layer 1) may not import lib/files (layer 5)',
    ]);
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('only lib/http speaks HTTP: no module outside it (functions and the Job program included) makes an ApiError', () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const offenders: string[] = [];
  for (const top of ['lib', 'functions', 'job']) {
    for (const file of modulesUnder(join(root, top))) {
      const rel = file.slice(root.length + 1);
      if (rel.startsWith('lib/http/') || rel.startsWith('lib/testing/')) continue;
      const text = readFileSync(file, 'utf8');
      if (/\bnew ApiError\(/.test(text) || /import[^;]*\b(ApiError|badRequest)\b[^;]*from '[^']*http\/envelope\.ts'/.test(text)) offenders.push(rel);
    }
  }
  assert.deepEqual(offenders, [], 'throw a DomainError (lib/errors.ts) instead; lib/http/error-map.ts answers it');
});

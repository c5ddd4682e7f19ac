import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkImports, circles, importGraph, LAYERS, modulesUnder, upwardImports } from '../scripts/check-imports.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

test('lib/ has no import circle, type-only imports included, and every import runs down the layers', () => {
  assert.deepEqual(checkImports(root), []);
});

test('every lib/ folder has a layer', () => {
  const folders = new Set([...importGraph(root).keys()].map((p) => p.split('/')).filter((p) => p.length > 2).map((p) => p[1]));
  for (const f of folders) assert.ok(Object.hasOwn(LAYERS, f), `lib/${f} has no layer`);
});

/** A throwaway tree with lib/ files, to see the check fail. */
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
    'lib/uploads/u.ts': "export const x = 1;\n",
    'lib/downloads/d.ts': "import type { y } from '../http/envelope.ts';\n",
    'lib/kube/k.ts': "import {\n  x,\n} from '../maintenance/m.ts';\n",
    'lib/maintenance/m.ts': 'export const x = 1;\n',
    'lib/maintenance/m.test.ts': "import '../http/envelope.ts';\n",
  });
  try {
    assert.deepEqual(upwardImports(importGraph(dir)), [
      'lib/downloads/d.ts -> lib/http/envelope.ts: downloads (layer 7) may not import http (layer 9)',
      'lib/kube/k.ts -> lib/maintenance/m.ts: kube (layer 1) may not import maintenance (layer 6)',
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

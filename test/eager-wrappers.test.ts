import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { build } from 'esbuild';
import { applyEdits, shiftMappings, wrapperEdits } from '../scripts/eager-wrappers.ts';

test('module wrappers become functions V8 compiles with the file; what uses this or arguments stays an arrow', () => {
  const code = [
    'var a=x((e,t)=>{t.exports=function(){return this}}),b=x(e=>{e.y=2});',
    'var c=x(()=>{return this}),d=x(()=>{return arguments.length}),f=x(async()=>{}),g=x(()=>1);',
    'var h=x(()=>{class K{m(){return this}}return K});',
  ].join('\n');
  const out = applyEdits(code, wrapperEdits(code));
  assert.equal(
    out,
    [
      'var a=x((function(e,t){t.exports=function(){return this}})),b=x((function(e){e.y=2}));',
      'var c=x(()=>{return this}),d=x(()=>{return arguments.length}),f=x(async()=>{}),g=x(()=>1);',
      'var h=x((function(){class K{m(){return this}}return K}));',
    ].join('\n'),
  );
});

/** Absolute generated columns of each line's segments. */
function columns(mappings: string): number[][] {
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  return mappings.split(';').map((line) => {
    let col = 0;
    return line
      .split(',')
      .filter(Boolean)
      .map((seg) => {
        let v = 0;
        let shift = 0;
        for (const ch of seg) {
          const d = B64.indexOf(ch);
          v += (d & 31) << shift;
          if (!(d & 32)) break;
          shift += 5;
        }
        col += v & 1 ? -(v >>> 1) : v >>> 1;
        return col;
      });
  });
}

test('a bundle with its wrappers rewritten runs the same, and its source map still points each segment at the same code', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'eager-'));
  try {
    writeFileSync(join(dir, 'dep.cjs'), 'const base = 40;\nmodule.exports = { answer(n) { return base + n; } };\n');
    writeFileSync(join(dir, 'entry.mjs'), "import dep from './dep.cjs';\nexport const value = dep.answer(2);\n");
    const r = await build({ entryPoints: [join(dir, 'entry.mjs')], bundle: true, format: 'esm', platform: 'node', minify: true, sourcemap: 'external', write: false, outdir: dir });
    const code = r.outputFiles.find((f) => f.path.endsWith('.js'))!.text;
    const map = JSON.parse(r.outputFiles.find((f) => f.path.endsWith('.map'))!.text) as { mappings: string };
    const edits = wrapperEdits(code);
    assert.ok(edits.length >= 3, code);
    const out = applyEdits(code, edits);
    writeFileSync(join(dir, 'out.mjs'), out);
    assert.equal(((await import(join(dir, 'out.mjs'))) as { value: number }).value, 42);

    const before = columns(map.mappings);
    const after = columns(shiftMappings(map.mappings, code, edits));
    const lines = code.split('\n');
    const outLines = out.split('\n');
    let compared = 0;
    before.forEach((cols, l) => {
      cols.forEach((c, i) => {
        const at = lines.slice(0, l).join('\n').length + (l ? 1 : 0) + c;
        // Segments on the `=>` an edit removes have no text of their own left to compare.
        if (code.startsWith('=>', at)) return;
        // The code up to the next edit is the same code.
        const next = Math.min(...edits.map((e) => e.at).filter((x) => x > at), at + 8);
        assert.equal(outLines[l]!.slice(after[l]![i]!, after[l]![i]! + next - at), lines[l]!.slice(c, c + next - at), `line ${l} column ${c}`);
        compared++;
      });
    });
    assert.ok(compared > 5);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

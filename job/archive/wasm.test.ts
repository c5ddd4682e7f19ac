import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { WASM_MODULES, type WasmModule, wasmPath } from './wasm.ts';

test('every WebAssembly module is found from source, and starts with the wasm magic', () => {
  for (const name of Object.keys(WASM_MODULES) as WasmModule[]) {
    const p = wasmPath(name, {});
    assert.deepEqual([...fs.readFileSync(p).subarray(0, 4)], [0, 0x61, 0x73, 0x6d], p);
  }
});

test('FELIS_WASM_DIR wins when it holds the module; a missing one falls through to the next place', () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-wasm-'));
  try {
    fs.writeFileSync(path.join(d, '7zz.wasm'), 'x');
    assert.equal(wasmPath('7zz.wasm', { FELIS_WASM_DIR: d }), path.join(d, '7zz.wasm'));
    assert.notEqual(wasmPath('liblzma.wasm', { FELIS_WASM_DIR: d }), path.join(d, 'liblzma.wasm'));
  } finally {
    fs.rmSync(d, { recursive: true, force: true });
  }
});

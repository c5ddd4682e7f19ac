/**
 * Where the Job program finds the WebAssembly modules its archive codecs run (7-Zip's `7zz.wasm`,
 * liblzma's `liblzma.wasm`). They are files, not strings inside the bundle: every Job starts the
 * program, and only an archive op needs them, so no other op parses a megabyte it never uses.
 *
 * Looked for, in order: `FELIS_WASM_DIR` (the image sets it), `wasm/` beside the running bundle
 * (`dist/wasm/`, which `scripts/build.ts` fills), and the npm package itself (running from source).
 *
 * @module
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Each module's file name and the package path it is copied from. */
export const WASM_MODULES = {
  '7zz.wasm': '7z-wasm/7zz.wasm',
  'liblzma.wasm': 'node-liblzma/wasm/liblzma.wasm',
} as const;

export type WasmModule = keyof typeof WASM_MODULES;

/** The path of one module, or throws naming every place looked at. */
export function wasmPath(name: WasmModule, env: NodeJS.ProcessEnv = process.env): string {
  const tried: string[] = [];
  const dirFromEnv = env.FELIS_WASM_DIR;
  if (dirFromEnv) {
    const p = join(dirFromEnv, name);
    if (fs.existsSync(p)) return p;
    tried.push(p);
  }
  const beside = join(dirname(fileURLToPath(import.meta.url)), 'wasm', name);
  if (fs.existsSync(beside)) return beside;
  tried.push(beside);
  try {
    return createRequire(import.meta.url).resolve(WASM_MODULES[name]);
  } catch {
    tried.push(WASM_MODULES[name]);
  }
  throw new Error(`the WebAssembly module ${name} is not installed (looked at ${tried.join(', ')})`);
}

/** The module's bytes, read once per process. */
const cache = new Map<WasmModule, Buffer>();
export function readWasm(name: WasmModule): Buffer {
  let b = cache.get(name);
  if (!b) {
    b = fs.readFileSync(wasmPath(name));
    cache.set(name, b);
  }
  return b;
}

/** Emscripten's JavaScript around 7zz.wasm, which the 7-Zip worker thread loads by path (job/archive/sevenzip.ts). */
export const SEVEN_ZIP_GLUE = '7zz.umd.cjs';

/** The glue's path: beside the modules (FELIS_WASM_DIR, `wasm/` beside the bundle), else the package's own file. */
export function sevenZipGluePath(env: NodeJS.ProcessEnv = process.env): string {
  for (const d of [env.FELIS_WASM_DIR, join(dirname(fileURLToPath(import.meta.url)), 'wasm')]) {
    if (d && fs.existsSync(join(d, SEVEN_ZIP_GLUE))) return join(d, SEVEN_ZIP_GLUE);
  }
  return createRequire(import.meta.url).resolve('7z-wasm/7zz.umd.js');
}

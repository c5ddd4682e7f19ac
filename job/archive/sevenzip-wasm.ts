/**
 * 7-Zip's WebAssembly (7z-wasm's `7zz.wasm`), compiled once per process, and the one way this
 * program starts it on its own thread. Compiling the 1.6 MiB module is most of what starting 7-Zip
 * costs: the 7-Zip workers (`sevenzip.ts`, which take the compiled module) and the bzip2 decoder
 * (`bzip2.ts`, on this thread) all instantiate this one compilation instead of each compiling the
 * bytes again.
 *
 * @module
 */
import type { SevenZipModule, SevenZipModuleOptions } from '7z-wasm';
import { readWasm } from './wasm.ts';

// The project's TypeScript libs carry no WebAssembly types: the little used here, declared.
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  instantiate(module: object, imports: object): Promise<object>;
}
const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

let module: object | undefined;

/** 7zz.wasm compiled (once): a WebAssembly.Module, which a worker can be handed as it is. */
export function sevenZipModule(): object {
  module ??= new wasm.Module(readWasm('7zz.wasm'));
  return module;
}

/** What a caller gives the Emscripten factory besides the module: its stdio callbacks. */
export type SevenZipOptions = Omit<Partial<SevenZipModuleOptions>, 'wasmBinary'>;

/** Starts 7-Zip on this thread over the compiled module (the ES module glue: the bundle has no `__dirname` for the UMD one). */
export async function startSevenZip(opts: SevenZipOptions): Promise<SevenZipModule> {
  const { default: factory } = await import('7z-wasm/7zz.es6.js');
  const compiled = sevenZipModule();
  // A failed instantiation would otherwise leave the factory's promise pending for ever.
  let failed!: (e: unknown) => void;
  const failure = new Promise<never>((_, reject) => (failed = reject));
  return Promise.race([
    factory({
      ...opts,
      instantiateWasm(imports: object, receive: (instance: object, module: object) => void) {
        wasm.instantiate(compiled, imports).then((instance) => receive(instance, compiled), failed);
        return {};
      },
    } as Parameters<typeof factory>[0]),
    failure,
  ]);
}

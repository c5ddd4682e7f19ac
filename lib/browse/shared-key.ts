/**
 * The shared job key as a session client holds it: read from its file once, on first use; a missing
 * or short key is said once in the log and turns that kind of session off (one-shot Jobs only).
 * @module
 */
import { readFileSync } from 'node:fs';
import { MIN_KEY_BYTES } from '../protocol/job-token.ts';

export class SharedKey {
  readonly #file: string;
  readonly #what: string;
  readonly #warn: ((obj: object, msg: string) => void) | undefined;
  #key: Buffer | undefined;
  #error: string | undefined;

  /** `what` names the sessions it turns off in the log line; `key` is the key itself (tests). */
  constructor(file: string, what: string, warn?: (obj: object, msg: string) => void, key?: Buffer) {
    this.#file = file;
    this.#what = what;
    this.#warn = warn;
    this.#key = key;
  }

  get(): Buffer | undefined {
    if (this.#key || this.#error) return this.#key;
    try {
      const k = readFileSync(this.#file);
      if (k.length < MIN_KEY_BYTES) throw new Error(`it holds ${k.length} bytes, at least ${MIN_KEY_BYTES} are needed`);
      this.#key = k;
    } catch (err) {
      this.#error = (err as Error).message;
      this.#warn?.({ keyFile: this.#file, err: this.#error }, `${this.#what} are off: the job key cannot be used`);
    }
    return this.#key;
  }
}

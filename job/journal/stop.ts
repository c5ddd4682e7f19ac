/**
 * What a stop signal (SIGTERM: the Job's deadline, its deletion, a node drain) does to an op.
 * While an op stages (it has said so, and nothing has been moved into the world) the signal ends
 * the Job at once: the world is as it was, and the op's working folder and journal are removed
 * (now, or by the next Job if this one is killed meanwhile). At any other time it waits for the
 * op to end: a placement is synchronous renames (a second or two for tens of thousands of files,
 * far inside the Pod's grace period of 30 s) and every other op is one synchronous step, so the
 * op finishes or rolls back and its result line is printed as usual.
 *
 * @module
 */
export class StopGate {
  readonly #exit: (message: string) => void;
  #cleanup: (() => void) | null = null;
  #staging = false;
  requested = false;

  constructor(exit: (message: string) => void) {
    this.#exit = exit;
  }

  /** The op stages from now on; `cleanup` undoes what it has staged (removes its working folder). */
  staging(cleanup: () => void): void {
    this.#staging = true;
    this.#cleanup = cleanup;
  }

  /** The op is placing, or has ended: a stop from now on waits for its result. */
  settled(): void {
    this.#staging = false;
    this.#cleanup = null;
  }

  /** The signal arrived. */
  request(): void {
    if (this.requested) return;
    this.requested = true;
    if (!this.#staging) return;
    try {
      this.#cleanup?.();
    } catch {
      // The journal is still staging: the next Job that mounts the world removes what is left.
    }
    this.#exit('stopped by a signal before anything was placed; nothing was changed');
  }
}

/** The Job program's exit on a stop while staging: said on stderr, infrastructure failure. */
export function exitStopped(message: string): void {
  process.stderr.write(`felis files: ${message}\n`);
  process.exit(1);
}

/**
 * What a stop signal (SIGTERM: the Job's deadline, its deletion, a node drain) does to an op.
 * Before any move has been made it ends the Job at once: the world is as it was, and the op's
 * journal, still `staging`, has its working folder removed (now, or by the next Job if this one is
 * killed meanwhile). Once the placement has begun the signal waits for the op to end: placement is
 * synchronous renames (a second or two for tens of thousands of files, far inside the Pod's grace
 * period of 30 s), so it finishes or rolls back and the result line is printed as usual.
 *
 * @module
 */
export class StopGate {
  readonly #exit: (message: string) => void;
  #finishing = false;
  #cleanup: (() => void) | null = null;
  requested = false;

  constructor(exit: (message: string) => void) {
    this.#exit = exit;
  }

  /** What to undo if a stop comes while staging (removing the working folder). */
  whileStaging(cleanup: (() => void) | null): void {
    this.#cleanup = cleanup;
  }

  /** From here on a stop waits for the op to end. */
  finishing(): void {
    this.#finishing = true;
  }

  /** The signal arrived. */
  request(): void {
    if (this.requested) return;
    this.requested = true;
    if (this.#finishing) return;
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

/**
 * How every mode of the Job program ends: its exit codes, and the result line on stdout that the
 * functions read from the Pod's log (a line that cannot be written is an infrastructure failure).
 * @module
 */
import { formatResultLine, type Result } from '../../lib/protocol/result.ts';

export const EXIT_OK = 0;
/** The world, the address or stdout could not be had, or a transfer failed part way. */
export const EXIT_INFRA = 1;
/** A wrong invocation. */
export const EXIT_USAGE = 2;

export interface CliIO {
  /** Writes the result line; resolves once written, rejects when it could not be. */
  stdout: (text: string) => Promise<void> | void;
  stderr: (text: string) => void;
}

/** Prints `result` as the result line: EXIT_OK, or EXIT_INFRA (said on stderr) when it cannot be. */
export async function printResult(io: CliIO, prefix: string, result: Result): Promise<number> {
  try {
    await io.stdout(formatResultLine(result));
    return EXIT_OK;
  } catch (e) {
    io.stderr(`${prefix}print result: ${e instanceof Error ? e.message : String(e)}\n`);
    return EXIT_INFRA;
  }
}

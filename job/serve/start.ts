/**
 * The start every serving mode of the Job program shares once its environment is read: fail before
 * listening when there is no world to serve, listen, and hand the listener its stop on a signal.
 * Each failure is said on stderr; the caller exits EXIT_INFRA (job/program/exit.ts).
 * @module
 */
import type { AddressInfo } from 'node:net';
import type { CliIO } from '../program/exit.ts';
import { WorldRoot } from '../volume/root.ts';

/** Can the world root be opened? Says why not on stderr when it cannot. */
export function worldRootOpens(worldsRoot: string, io: CliIO, prefix: string): boolean {
  try {
    WorldRoot.open(worldsRoot).close();
    return true;
  } catch (e) {
    io.stderr(`${prefix}open world root ${worldsRoot}: ${(e as Error).message}\n`);
    return false;
  }
}

/**
 * Starts a mode's listener and registers its stop for SIGTERM/SIGINT (`onSignal`); undefined, said
 * on stderr as `<prefix><what>: <error>`, when it cannot be started.
 */
export async function listening<S extends { address: AddressInfo; stop(reason: 'signal'): void }>(
  start: () => Promise<S>,
  what: string,
  io: CliIO,
  prefix: string,
  onSignal: ((stop: () => void) => void) | undefined,
): Promise<S | undefined> {
  let s: S;
  try {
    s = await start();
  } catch (e) {
    io.stderr(`${prefix}${what}: ${(e as Error).message}\n`);
    return undefined;
  }
  onSignal?.(() => s.stop('signal'));
  return s;
}

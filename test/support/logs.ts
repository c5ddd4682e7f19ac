/** A logger whose lines a test can read: what the functions log (and never tell the caller). */
import { Writable } from 'node:stream';
import { type Logger, pino } from 'pino';

export function capturedLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _e, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

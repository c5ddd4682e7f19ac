/**
 * Structured logs (pino): one JSON line per event, request ids on every request-scoped line.
 * LOG_LEVEL sets the level (`silent` in tests).
 * @module
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(name: string, env: NodeJS.ProcessEnv = process.env): Logger {
  return pino({ name, level: env.LOG_LEVEL ?? 'info', base: { svc: name } });
}

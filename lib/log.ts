/**
 * Structured logs (pino): one JSON line per event, request ids on every request-scoped line.
 * LOG_LEVEL sets the level (`silent` in tests). A line logged while serving a request names the
 * request's actor (lib/actor.ts).
 * @module
 */
import { type Logger, pino } from 'pino';
import { actorMixin } from './actor.ts';

export type { Logger };

export function createLogger(name: string, env: NodeJS.ProcessEnv = process.env): Logger {
  return pino({ name, level: env.LOG_LEVEL ?? 'info', base: { svc: name }, mixin: actorMixin });
}

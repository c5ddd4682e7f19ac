/**
 * Audit events for successful mutations, as structured log lines a collector can route:
 * `{"audit":true,"action":"file.write","actor":"<user>","target":"<server>:<path>",...}`, where the
 * actor is the request's reviewed user (`bearer` in token mode). Only what happened is
 * audited; refusals and failures are not. An action on the server itself (no path) targets
 * `<server>`. With K_SINK set, each is also sent as a `dev.felis.audit.<action>` CloudEvent.
 * @module
 */
import { actorFields, BEARER, currentActor } from '../actor.ts';
import { emit } from '../events/emit.ts';
import type { Logger } from '../log.ts';

export function audit(logger: Logger, requestId: string, action: string, server: string, path: string, payload?: object): void {
  const event = { action, ...actorFields(currentActor() ?? BEARER), target: path === '' ? server : `${server}:${path}`, request_id: requestId, ...(payload ? { payload } : {}) };
  logger.info({ audit: true, ...event }, action);
  emit({ type: `dev.felis.audit.${action}`, subject: event.target, data: event }, logger);
}

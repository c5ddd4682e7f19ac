/**
 * Audit events for successful mutations, as structured log lines a collector can route:
 * `{"audit":true,"action":"file.write","target":"<server>:<path>",...}`. Only what happened is
 * audited; refusals and failures are not. An action on the server itself (no path) targets
 * `<server>`.
 * @module
 */
import type { Logger } from '../log.ts';

export function audit(logger: Logger, requestId: string, action: string, server: string, path: string, payload?: object): void {
  logger.info({ audit: true, action, actor: 'bearer', target: path === '' ? server : `${server}:${path}`, request_id: requestId, ...(payload ? { payload } : {}) }, action);
}

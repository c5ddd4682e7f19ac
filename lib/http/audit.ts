/**
 * Audit events for successful mutations (felis-behaviour §8.9), as structured log lines a
 * collector can route: `{"audit":true,"action":"file.write","target":"<server>:<path>",...}`.
 * @module
 */
import type { Logger } from '../log.ts';

export function audit(logger: Logger, requestId: string, action: string, server: string, path: string, payload?: object): void {
  logger.info({ audit: true, action, actor: 'bearer', target: `${server}:${path}`, request_id: requestId, ...(payload ? { payload } : {}) }, action);
}

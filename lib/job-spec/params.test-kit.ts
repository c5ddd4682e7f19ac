/**
 * Test-only fixtures for the Job renderer's tests (nothing outside them imports this): the params
 * of a file Job they start from.
 * @module
 */
import type { JobParams } from './render.ts';

/** A sync read of server.properties in survival's world; `extra` says what a test is about (op, path, periods). */
export function jobParams(extra: Partial<JobParams> = {}): JobParams {
  return {
    namespace: 'minecraft',
    server: 'survival',
    opId: '0123456789abcdef',
    op: 'read',
    path: 'server.properties',
    worldPvc: 'world-survival-0',
    image: 'felis:dev',
    command: ['/usr/local/bin/felis', 'files'],
    serviceAccount: 'felis-restore',
    worldsRoot: '/data',
    deadlineSeconds: 120,
    ttlSeconds: 120,
    ...extra,
  };
}

/** An async op's periods and flag, in place of a sync Job's. */
export const ASYNC = { deadlineSeconds: 7200, ttlSeconds: 1800, async: true } as const;

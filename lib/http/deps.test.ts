import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { configFromEnv } from '../config.ts';
import { createLogger } from '../log.ts';
import { buildDeps } from './deps.ts';

test('a function whose pull rules its Jobs could not read stops when its routes load', () => {
  const config = configFromEnv({ FELIS_IMAGE: 'img', FELIS_PULL_ALLOW: '127.0.0.1:8099' });
  assert.throws(() => buildDeps(new KubeConfig(), { ...config, logger: createLogger('test', { FELIS_LOG_LEVEL: 'silent' }) }), /invalid configuration FELIS_PULL_ALLOW/);
});

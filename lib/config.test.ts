import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configFromEnv } from './config.ts';

test('defaults are Felis\'s; no image means no editor; the namespace is read once for everything', () => {
  const bare = configFromEnv({});
  assert.deepEqual(bare, { namespace: 'minecraft', editor: undefined, restoreTemplate: undefined, restartAnnotation: undefined, controllerNode: undefined });
  assert.equal(configFromEnv({ FELIS_CONTROLLER_NODE: 'node-a' }).controllerNode, 'node-a');
  const c = configFromEnv({ FELIS_IMAGE: 'img', FELIS_NAMESPACE: 'games', FELIS_FILES_TIMEOUT_SECONDS: '5', FELIS_RESTORE_TEMPLATE: '' });
  assert.equal(c.namespace, 'games');
  assert.equal(c.editor!.namespace, 'games');
  assert.deepEqual(c.editor!.command, ['/usr/local/bin/felis', 'files']);
  assert.equal(c.editor!.timeoutMs, 5000);
  assert.equal(c.editor!.cpu, '500m');
  assert.equal(c.restoreTemplate, undefined);
});

test('a malformed number is refused at start, naming the variable', () => {
  assert.throws(() => configFromEnv({ FELIS_JOB_TTL_SECONDS: 'soon' }), /FELIS_JOB_TTL_SECONDS/);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFromEnv } from './config.ts';

test("defaults are Felis's; no image means no editor; the namespace is read once for everything", () => {
  const bare = configFromEnv({});
  assert.deepEqual(bare, {
    namespace: 'minecraft',
    editor: undefined,
    restoreTemplate: undefined,
    restartAnnotation: undefined,
    controllerNode: undefined,
    readWhileRunning: true,
    joinChanges: true,
    uploads: { idleSeconds: 1800, lifetimeSeconds: 21600, bodyIdleSeconds: 30, urlSeconds: 600 },
  });
  assert.equal(configFromEnv({ FELIS_CONTROLLER_NODE: 'node-a' }).controllerNode, 'node-a');
  const c = configFromEnv({ FELIS_IMAGE: 'img', FELIS_NAMESPACE: 'games', FELIS_FILES_TIMEOUT_SECONDS: '5', FELIS_RESTORE_TEMPLATE: '' });
  assert.equal(c.namespace, 'games');
  assert.equal(c.editor!.namespace, 'games');
  assert.deepEqual(c.editor!.command, ['/usr/local/bin/felis', 'files']);
  assert.equal(c.editor!.timeoutMs, 5000);
  assert.equal(c.editor!.cpu, '500m');
  assert.equal(c.restoreTemplate, undefined);
});

test('FELIS_READ_WHILE_RUNNING: on by default (empty too), off keeps every file call behind a stopped server, anything else refused', () => {
  assert.equal(configFromEnv({ FELIS_READ_WHILE_RUNNING: '' }).readWhileRunning, true);
  assert.equal(configFromEnv({ FELIS_READ_WHILE_RUNNING: 'on' }).readWhileRunning, true);
  assert.equal(configFromEnv({ FELIS_READ_WHILE_RUNNING: 'off' }).readWhileRunning, false);
  assert.throws(() => configFromEnv({ FELIS_READ_WHILE_RUNNING: 'no' }), /invalid configuration FELIS_READ_WHILE_RUNNING: expected one of on, off, got "no"/);
});

test("FELIS_JOIN_CHANGES: on by default (empty too), off keeps Felis's 409 while another change holds the world, anything else refused", () => {
  assert.equal(configFromEnv({ FELIS_JOIN_CHANGES: '' }).joinChanges, true);
  assert.equal(configFromEnv({ FELIS_JOIN_CHANGES: 'on' }).joinChanges, true);
  assert.equal(configFromEnv({ FELIS_JOIN_CHANGES: 'off' }).joinChanges, false);
  assert.throws(() => configFromEnv({ FELIS_JOIN_CHANGES: 'yes' }), /invalid configuration FELIS_JOIN_CHANGES: expected one of on, off, got "yes"/);
});

test('a malformed number is refused at start, naming the variable', () => {
  assert.throws(() => configFromEnv({ FELIS_JOB_TTL_SECONDS: 'soon' }), /FELIS_JOB_TTL_SECONDS/);
});

test('a required text variable set to empty is refused; an optional one set to empty is unset', () => {
  assert.throws(() => configFromEnv({ FELIS_NAMESPACE: '' }), /invalid configuration FELIS_NAMESPACE: must not be empty/);
  assert.throws(() => configFromEnv({ FELIS_IMAGE: 'img', FELIS_FILES_COMMAND: '' }), /FELIS_FILES_COMMAND/);
  const c = configFromEnv({ FELIS_IMAGE: '', FELIS_CONTROLLER_NODE: '', FELIS_RESTART_ANNOTATION: 'x/y' });
  assert.equal(c.editor, undefined);
  assert.equal(c.controllerNode, undefined);
  assert.equal(c.restartAnnotation, 'x/y');
});

test('a count is a whole number of at least 0; anything else is refused with the value it got', () => {
  for (const bad of ['1.5', '-1', 'Infinity', 'NaN', '9007199254740993', '12s']) {
    assert.throws(() => configFromEnv({ FELIS_JOB_DEADLINE_SECONDS: bad }), new RegExp(`FELIS_JOB_DEADLINE_SECONDS: expected a whole number of at least 0, got "${bad}"`), bad);
  }
  const e = configFromEnv({ FELIS_IMAGE: 'img', FELIS_JOB_DEADLINE_SECONDS: ' 7 ', FELIS_JOB_RUN_AS_USER: '1000', FELIS_JOB_FS_GROUP: '0' }).editor!;
  assert.equal(e.deadlineSeconds, 7);
  assert.equal(e.runAsUser, 1000);
  assert.equal(e.fsGroup, 0);
  assert.equal(e.ttlSeconds, 120);
});

test('the first bad variable in reading order is the one named', () => {
  assert.throws(() => configFromEnv({ FELIS_JOB_FS_GROUP: 'x', FELIS_NAMESPACE: '' }), /FELIS_NAMESPACE/);
  assert.throws(() => configFromEnv({ FELIS_JOB_FS_GROUP: 'x', FELIS_JOB_TTL_SECONDS: '-3' }), /FELIS_JOB_TTL_SECONDS/);
});

test('background Jobs: 2 h deadline, 30 min TTL and CPU 1 unless configured; bad values named', () => {
  const d = configFromEnv({ FELIS_IMAGE: 'img' }).editor!;
  assert.deepEqual([d.asyncDeadlineSeconds, d.asyncTtlSeconds, d.asyncCpu], [7200, 1800, '1']);
  const e = configFromEnv({ FELIS_IMAGE: 'img', FELIS_ASYNC_JOB_DEADLINE_SECONDS: '14400', FELIS_ASYNC_JOB_TTL_SECONDS: '0', FELIS_ASYNC_JOB_CPU: '1500m' }).editor!;
  assert.deepEqual([e.asyncDeadlineSeconds, e.asyncTtlSeconds, e.asyncCpu], [14400, 0, '1500m']);
  // The sync Jobs' settings are their own.
  assert.deepEqual([e.deadlineSeconds, e.ttlSeconds, e.cpu], [120, 120, '500m']);
  assert.throws(() => configFromEnv({ FELIS_ASYNC_JOB_DEADLINE_SECONDS: '0' }), /invalid configuration FELIS_ASYNC_JOB_DEADLINE_SECONDS: expected a whole number from 1 to 604800, got "0"/);
  assert.throws(() => configFromEnv({ FELIS_ASYNC_JOB_TTL_SECONDS: '30m' }), /FELIS_ASYNC_JOB_TTL_SECONDS: expected a whole number from 0 to 604800, got "30m"/);
  for (const bad of ['', 'one', '-1', '0', '0m', '1 core']) {
    assert.throws(
      () => configFromEnv({ FELIS_ASYNC_JOB_CPU: bad }),
      new RegExp(`FELIS_ASYNC_JOB_CPU: expected a Kubernetes CPU quantity above 0, such as 1 or 1500m, got ${JSON.stringify(JSON.stringify(bad)).slice(1, -1)}`),
      bad,
    );
  }
});

test('a copy is sync up to 64 MiB unless FELIS_COPY_SYNC_MAX_BYTES lowers it; above 64 MiB is refused', () => {
  assert.equal(configFromEnv({ FELIS_IMAGE: 'img' }).editor!.copySyncMaxBytes, 64 << 20);
  assert.equal(configFromEnv({ FELIS_IMAGE: 'img', FELIS_COPY_SYNC_MAX_BYTES: '1024' }).editor!.copySyncMaxBytes, 1024);
  assert.equal(configFromEnv({ FELIS_IMAGE: 'img', FELIS_COPY_SYNC_MAX_BYTES: '0' }).editor!.copySyncMaxBytes, 0);
  for (const bad of [String((64 << 20) + 1), '-1', 'x']) assert.throws(() => configFromEnv({ FELIS_COPY_SYNC_MAX_BYTES: bad }), /FELIS_COPY_SYNC_MAX_BYTES/, bad);
});

test('the pull rules are passed on to the pull Jobs as they are given, trimmed', () => {
  const c = configFromEnv({ FELIS_IMAGE: 'img', FELIS_PULL_ALLOW: ' mirror.example , 127.0.0.2,fd00::/8 ', FELIS_PULL_PORTS: '8080' });
  assert.equal(c.editor!.pullEnv!.FELIS_PULL_ALLOW, 'mirror.example , 127.0.0.2,fd00::/8');
  assert.equal(c.editor!.pullEnv!.FELIS_PULL_PORTS, '8080');
  assert.equal(c.editor!.pullEnv!.FELIS_PULL_DENY, undefined);
});

test('the undo trash: on for seven days unless configured; FELIS_TRASH and FELIS_TRASH_SECONDS read as the Job reads them, a bad value named', () => {
  assert.deepEqual(configFromEnv({ FELIS_IMAGE: 'img' }).editor!.trash, { enabled: true, seconds: 7 * 24 * 3600, actor: '' });
  assert.deepEqual(configFromEnv({ FELIS_IMAGE: 'img', FELIS_TRASH: 'off', FELIS_TRASH_SECONDS: '3600' }).editor!.trash, { enabled: false, seconds: 3600, actor: '' });
  assert.deepEqual(configFromEnv({ FELIS_IMAGE: 'img', FELIS_TRASH: 'ON', FELIS_TRASH_SECONDS: '' }).editor!.trash, { enabled: true, seconds: 604800, actor: '' });
  assert.throws(() => configFromEnv({ FELIS_IMAGE: 'img', FELIS_TRASH: 'maybe' }), /invalid configuration FELIS_TRASH: FELIS_TRASH must be on or off/);
  assert.throws(() => configFromEnv({ FELIS_TRASH_SECONDS: '59' }), /invalid configuration FELIS_TRASH_SECONDS: /);
  assert.throws(() => configFromEnv({ FELIS_TRASH_SECONDS: '1d' }), /FELIS_TRASH_SECONDS/);
});

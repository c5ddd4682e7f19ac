import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeServerApi, matches } from '../testing/fake-servers.ts';
import { felisGamePod, felisGamePodLabels, felisServer } from '../testing/felis-fixtures.ts';
import { DEFAULT_RESTART_ANNOTATION, executionNode, gamePodSelector, worldClaim } from './contracts.ts';
import { MaintenanceGates } from './file-gates.ts';
import { WorldLock } from './world-lock.ts';

test("the game-Pod selector is Felis's operator labels, and selects its Pods but not a file Job's", () => {
  assert.equal(gamePodSelector('survival'), 'felis.lolicon.best/server=survival,felis.lolicon.best/component=server');
  assert.equal(matches(gamePodSelector('survival'), felisGamePodLabels('survival')), true);
  assert.equal(matches(gamePodSelector('survival'), felisGamePodLabels('creative')), false);
  const fileJobPod = { 'felis.lolicon.best/server': 'survival', 'app.kubernetes.io/managed-by': 'felis-files', 'app.kubernetes.io/component': 'world-files' };
  assert.equal(matches(gamePodSelector('survival'), fileJobPod), false);
  // The label family Felis puts on Jobs, never on game Pods, must not be what we look for.
  assert.equal(matches(gamePodSelector('survival'), { 'felis.lolicon.best/server': 'survival', 'app.kubernetes.io/component': 'server' }), false);
});

test('the world claim is spec.storage.claimName, else world-<name>-0', () => {
  assert.equal(worldClaim(felisServer('survival', { claimName: 'survival-world-v2' }), 'survival'), 'survival-world-v2');
  assert.equal(worldClaim(felisServer('survival'), 'survival'), 'world-survival-0');
  assert.equal(worldClaim(undefined, 'gone'), 'world-gone-0');
  // A field Felis does not have is not read.
  const guessed = { ...felisServer('survival'), spec: { worldClaim: 'elsewhere' } };
  assert.equal(worldClaim(guessed as never, 'survival'), 'world-survival-0');
});

test('the execution node is spec.nodeName, else status.nodeName, else the controller node, else none', () => {
  assert.equal(executionNode(felisServer('s', { nodeName: 'approved', statusNodeName: 'last' }), 'ctl'), 'approved');
  assert.equal(executionNode(felisServer('s', { statusNodeName: 'last' }), 'ctl'), 'last');
  assert.equal(executionNode(felisServer('s'), 'ctl'), 'ctl');
  assert.equal(executionNode(felisServer('s')), undefined);
});

test('the pending-restart annotation is felis.lolicon.best/restart by default', () => {
  assert.equal(DEFAULT_RESTART_ANNOTATION, 'felis.lolicon.best/restart');
});

test("the file gates find a Felis-shaped server's world at its claim and node", async () => {
  const api = new FakeServerApi();
  api.put(felisServer('survival', { claimName: 'survival-world-v2', statusNodeName: 'node-b' }));
  api.claims.add('survival-world-v2');
  const gates = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft' }), { controllerNode: 'ctl' });
  assert.deepEqual(await gates.enter('survival', { op: 'read', path: 'a' }), { server: 'survival', world: { claim: 'survival-world-v2', node: 'node-b' }, worldState: 'stopped' });
  assert.ok(api.calls.includes('get pvc survival-world-v2'));
});

test('a terminating Felis game Pod refuses a write at admission, even with desired Stopped and phase Stopped', async () => {
  const api = new FakeServerApi();
  api.put(felisServer('survival'));
  api.claims.add('world-survival-0');
  api.pods.push(felisGamePod('survival', { terminating: true }));
  const gates = new MaintenanceGates(api, new WorldLock(api, { namespace: 'minecraft' }));
  const access = { op: 'write', path: 'a.txt' } as const;
  await gates.enter('survival', access); // the entry gate passes a stopping server …
  let ran = false;
  await assert.rejects(
    gates.run('survival', access, async () => (ran = true)),
    { name: 'NotStoppedError' },
  ); // … admission does not
  assert.equal(ran, false);
  assert.equal(api.calls.filter((c) => c.startsWith('patch')).length, 0, 'no lock was written');
});

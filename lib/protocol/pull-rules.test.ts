import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPullEnv, readPullPorts, readPullRules } from './pull-rules.ts';

test('a rule the pull Job could not read is refused, naming the variable and the rule', () => {
  for (const [name, bad, why] of [
    ['FELIS_PULL_ALLOW', '127.0.0.1:8099', /invalid configuration FELIS_PULL_ALLOW: "127.0.0.1:8099" is neither a host name nor an address \(a rule has no port/],
    ['FELIS_PULL_ALLOW', 'mirror.example,10.0.0.0/33', /FELIS_PULL_ALLOW: "10.0.0.0\/33" is not a CIDR/],
    ['FELIS_PULL_DENY', 'bad_host', /FELIS_PULL_DENY: "bad_host" is neither a host name nor an address/],
    ['FELIS_PULL_PORTS', '8080,70000', /FELIS_PULL_PORTS: "70000" is not a port/],
  ] as const) {
    assert.throws(() => checkPullEnv({ [name]: bad }), why, `${name}=${bad}`);
  }
  assert.doesNotThrow(() => checkPullEnv({ FELIS_PULL_ALLOW: ' mirror.example., 127.0.0.2, fd00::/8 ,', FELIS_PULL_DENY: '', FELIS_PULL_PORTS: '8080, 8443' }));
});

test('rules read as the Job uses them: host names lower case without the trailing dot, an address as its own network', () => {
  const r = readPullRules('Mirror.Example., 127.0.0.2, fd00::/8');
  assert.deepEqual([...r.hosts], ['mirror.example']);
  assert.deepEqual(
    r.nets.map(([a, bits]) => `${a.toString()}/${bits}`),
    ['127.0.0.2/32', 'fd00::/8'],
  );
  assert.deepEqual(readPullPorts('8080, 8443,'), [8080, 8443]);
});

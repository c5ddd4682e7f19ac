import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clean, dir, join, leadsOutside } from './pathutil.ts';

test('clean matches Go path.Clean', () => {
  const cases: [string, string][] = [
    ['', '.'],
    ['.', '.'],
    ['./', '.'],
    ['config/..', '.'],
    ['config/sub/', 'config/sub'],
    ['./config/paper-global.yml', 'config/paper-global.yml'],
    ['config//paper-global.yml', 'config/paper-global.yml'],
    ['config/../config/paper-global.yml', 'config/paper-global.yml'],
    ['config/./paper-global.yml', 'config/paper-global.yml'],
    ['../outside/made', '../outside/made'],
    ['a/../../x', '../x'],
    ['/etc/passwd', '/etc/passwd'],
    ['/../x', '/x'],
    ['//a//b/', '/a/b'],
    ['..', '..'],
    ['../..', '../..'],
  ];
  for (const [input, want] of cases) assert.equal(clean(input), want, JSON.stringify(input));
});

test('dir and join match Go path.Dir and path.Join', () => {
  assert.equal(dir('plugins/x'), 'plugins');
  assert.equal(dir('disabled/plugins-off'), 'disabled');
  assert.equal(dir('x'), '.');
  assert.equal(dir('a/b/c'), 'a/b');
  assert.equal(join('config', '../server.properties'), 'server.properties');
  assert.equal(join('.', '../outside'), '../outside');
  assert.equal(join('', ''), '');
  assert.ok(leadsOutside('..'));
  assert.ok(leadsOutside('../x'));
  assert.ok(!leadsOutside('..x'));
  assert.ok(!leadsOutside('a/..'));
});

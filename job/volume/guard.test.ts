import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { makeWorld } from '../testing/world.ts';
import { isSecretName, propertiesIdentity, redactProperties, renameGuardIdentities, secretIdentity } from './guard.ts';
import { sameIdentity, WorldRoot } from './root.ts';

const r = (s: string) => redactProperties(Buffer.from(s)).toString();

test('redaction: rcon.password and forwarding-secrets lines, everything else untouched', () => {
  assert.equal(r('motd=hi\nrcon.password=hunter2\n'), 'motd=hi\nrcon.password=<redacted by felis>\n');
  assert.equal(r('forwarding-secrets=abc\nonline-mode=false'), 'forwarding-secrets=<redacted by felis>\nonline-mode=false');
  // Leading whitespace and the CR of a CRLF line go; other CRLF lines keep their CR.
  assert.equal(r('motd=hi\r\n  \trcon.password=x\r\nport=1\r\n'), 'motd=hi\r\nrcon.password=<redacted by felis>\nport=1\r\n');
  // Not a prefix match on a different key, nor without the "=".
  assert.equal(r('rcon.password.old=x\n#rcon.password=x\nrcon.passwordx=1\nrcon.port=25575'), 'rcon.password.old=x\n#rcon.password=x\nrcon.passwordx=1\nrcon.port=25575');
  // An empty value is still redacted; no trailing newline stays so.
  assert.equal(r('rcon.password='), 'rcon.password=<redacted by felis>');
  assert.equal(r(''), '');
  assert.equal(r('\n\n'), '\n\n');
  // Unicode spaces Go's TrimSpace removes.
  assert.equal(r('\u00a0\u3000rcon.password=x'), 'rcon.password=<redacted by felis>');
});

test('redaction is binary-safe for the lines it keeps', () => {
  const input = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x0a]), Buffer.from('rcon.password=s\n'), Buffer.from([0xc3, 0x28])]);
  const out = redactProperties(input);
  assert.deepEqual(out, Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x0a]), Buffer.from('rcon.password=<redacted by felis>\n'), Buffer.from([0xc3, 0x28])]));
});

test('the secret name check catches every cleaned spelling and nothing else', () => {
  for (const n of ['config/paper-global.yml', './config/paper-global.yml', 'config//paper-global.yml', 'config/../config/paper-global.yml', 'config/./paper-global.yml', 'config/paper-global.yml/']) {
    assert.ok(isSecretName(n), n);
  }
  for (const n of ['config/paper.yml', 'plugins/config/paper-global.yml', 'paper-global.yml', 'config/paper-global.yml.bak']) {
    assert.ok(!isSecretName(n), n);
  }
});

test('guard identities are looked up through the root; a missing file guards nothing', () => {
  const w = makeWorld();
  const root = WorldRoot.open(w.root);
  try {
    const secret = secretIdentity(root);
    const props = propertiesIdentity(root);
    assert.ok(secret && props);
    assert.equal(secret.ino, fs.statSync(w.p('config/paper-global.yml'), { bigint: true }).ino);
    assert.equal(props.ino, fs.statSync(w.p('server.properties'), { bigint: true }).ino);
    // config, config/paper-global.yml and server.properties, each once (no links: lstat == stat).
    const ids = renameGuardIdentities(root);
    assert.equal(ids.length, 6);
    assert.ok(ids.some((i) => sameIdentity(i, secret)));
  } finally {
    root.close();
  }
  fs.rmSync(w.p('config/paper-global.yml'));
  const root2 = WorldRoot.open(w.root);
  try {
    assert.equal(secretIdentity(root2), null);
    assert.equal(renameGuardIdentities(root2).length, 4);
  } finally {
    root2.close();
  }
});

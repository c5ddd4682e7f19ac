import assert from 'node:assert/strict';
import { test } from 'node:test';
import ipaddr from 'ipaddr.js';
import { openPull, PullFailed, type Request, type Resolve } from './connect.ts';
import { checkAddresses, checkUrl, PolicyError, PullRefused, policyFromEnv } from './guard.ts';
import { parseAddress, REFUSED_V4, REFUSED_V6, refusedReason } from './ranges.ts';

const none = policyFromEnv({});

/** An address inside the row's block (its network address, or one further in when that is the row's own case). */
function inside(cidr: string): string {
  const [net, bits] = ipaddr.parseCIDR(cidr);
  const bytes = net.toByteArray();
  // One above the network address, when the block has room for it.
  if (bits < bytes.length * 8) bytes[bytes.length - 1] |= 1;
  return ipaddr.fromByteArray(bytes).toString();
}

for (const row of [...REFUSED_V4, ...REFUSED_V6]) {
  if (row.cidr === '::/0') continue; // its own test below
  test(`refused: ${row.cidr} (${row.reason})`, () => {
    const a = parseAddress(inside(row.cidr))!;
    assert.ok(a, row.cidr);
    const why = refusedReason(a);
    assert.notEqual(why, null, `${a.toString()} should be refused`);
  });
}

test('refused: IPv6 outside global unicast (2000::/3) is reserved; the examples the rows name are their own', () => {
  assert.match(refusedReason(parseAddress('4000::1')!)!, /reserved/);
  assert.match(refusedReason(parseAddress('c000::1')!)!, /reserved/);
  assert.equal(refusedReason(parseAddress('169.254.169.254')!), 'link-local, cloud metadata (169.254.0.0/16)');
  assert.equal(refusedReason(parseAddress('100.64.0.1')!), 'shared address space, carrier-grade NAT (100.64.0.0/10)');
  assert.equal(refusedReason(parseAddress('0.1.2.3')!), '"this network" (0.0.0.0/8)');
  assert.equal(refusedReason(parseAddress('255.255.255.255')!), 'limited broadcast (255.255.255.255)');
  assert.equal(refusedReason(parseAddress('2001:db8::1')!), 'documentation (2001:db8::/32)');
});

test('public addresses pass: IPv4, IPv6 global unicast, and embedding forms of a public IPv4', () => {
  for (const s of ['8.8.8.8', '1.1.1.1', '151.101.1.69', '2a00:1450:4001:80b::200e', '2606:4700::1111', '::ffff:8.8.8.8', '2002:0808:0808::1']) {
    assert.equal(refusedReason(parseAddress(s)!), null, s);
  }
  // Just outside refused blocks.
  for (const s of ['100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '198.17.255.255', '198.20.0.0', '223.255.255.255']) {
    assert.equal(refusedReason(parseAddress(s)!), null, s);
  }
});

test('IPv4-mapped, 6to4 forms of a refused IPv4 are refused; NAT64 and Teredo always', () => {
  assert.match(refusedReason(parseAddress('::ffff:127.0.0.1')!)!, /IPv4-mapped form of loopback/);
  assert.match(refusedReason(parseAddress('::ffff:7f00:1')!)!, /IPv4-mapped form of loopback/);
  assert.match(refusedReason(parseAddress('::ffff:a9fe:a9fe')!)!, /IPv4-mapped form of link-local/);
  assert.match(refusedReason(parseAddress('2002:a00:1::1')!)!, /6to4 form of private/);
  assert.match(refusedReason(parseAddress('64:ff9b::808:808')!)!, /NAT64/);
  assert.match(refusedReason(parseAddress('64:ff9b::7f00:1')!)!, /NAT64/);
  assert.match(refusedReason(parseAddress('64:ff9b:1::a00:1')!)!, /NAT64 local-use/);
  assert.match(refusedReason(parseAddress('2001:0:4136:e378:8000:63bf:3fff:fdd2')!)!, /Teredo/);
  // Hex form: ipaddr.js reads a dotted tail (::127.0.0.1) as IPv4-mapped, which is refused all the same.
  assert.match(refusedReason(parseAddress('::7f00:1')!)!, /IPv4-compatible/);
  assert.match(refusedReason(parseAddress('::808:808')!)!, /IPv4-compatible/);
  assert.equal(parseAddress('fe80::1%eth0'), undefined, 'a zone is never a destination');
});

test('URL checks: scheme, userinfo, ports; decimal, octal and hex IPv4 literals are the loopback they mean', () => {
  const refused = (u: string, re: RegExp, p = none) =>
    assert.throws(
      () => checkUrl(u, p),
      (e: unknown) => e instanceof PullRefused && re.test(e.reason),
      u,
    );
  refused('ftp://example.com/x', /scheme ftp/);
  refused('file:///etc/passwd', /scheme file/);
  refused('gopher://example.com/', /scheme/);
  refused('http://user:pw@example.com/', /credentials/);
  refused('http://user@example.com/', /credentials/);
  refused('http://example.com:8080/', /port 8080/);
  refused('https://example.com:22/', /port 22/);
  refused('http://2130706433/', /127\.0\.0\.1.*loopback/);
  refused('http://0177.0.0.1/', /127\.0\.0\.1.*loopback/);
  refused('http://0x7f.1/', /127\.0\.0\.1.*loopback/);
  refused('http://[::ffff:127.0.0.1]/', /IPv4-mapped form of loopback/);
  refused('http://[::1]/', /loopback/);
  refused('http://169.254.169.254/latest/meta-data/', /link-local/);
  refused('http://0.0.0.0/', /this network/);
  refused('not a url', /cannot be parsed/);
  assert.equal(checkUrl('https://example.com/a.jar', none).port, 443);
  assert.equal(checkUrl('http://EXAMPLE.com./a', none).host, 'example.com');
  assert.equal(checkUrl('http://example.com:8080/', policyFromEnv({ FELIS_PULL_PORTS: '8080' })).port, 8080);
});

test('operator rules: allow by CIDR or host (any port), deny wins, unreadable rules are said', () => {
  const loop = policyFromEnv({ FELIS_PULL_ALLOW: '127.0.0.1' });
  assert.equal(checkUrl('http://127.0.0.1:9999/x', loop).port, 9999);
  assert.throws(() => checkUrl('http://127.0.0.2/x', loop), PullRefused);
  const net = policyFromEnv({ FELIS_PULL_ALLOW: '10.1.0.0/16, mirror.internal', FELIS_PULL_DENY: '10.1.2.0/24,bad.example' });
  const a = (s: string) => parseAddress(s)!;
  checkAddresses('x', [a('10.1.9.9')], 8443, net);
  assert.throws(() => checkAddresses('x', [a('10.1.2.3')], 80, net), /denied by the operator/);
  assert.throws(() => checkAddresses('x', [a('::ffff:10.1.2.3')], 80, net), /denied by the operator/, 'mapped forms meet IPv4 rules');
  assert.throws(() => checkUrl('http://bad.example/', net), /host bad\.example is denied/);
  const dest = checkUrl('http://mirror.internal:81/', net);
  assert.equal(dest.hostAllowed, true);
  checkAddresses(dest.host, [a('192.168.1.1')], 81, net, true);
  // A denied address stays denied even for an allowed host; a public address on an odd port is not allowed by another's rule.
  assert.throws(() => checkAddresses('mirror.internal', [a('10.1.2.9')], 80, net, true), /denied/);
  assert.throws(() => checkAddresses('x', [a('8.8.8.8')], 8443, net), /port 8443/);
  for (const bad of [{ FELIS_PULL_ALLOW: '10.0.0.0/99' }, { FELIS_PULL_DENY: 'not a host!' }, { FELIS_PULL_PORTS: '70000' }, { FELIS_PULL_PORTS: 'http' }]) {
    assert.throws(() => policyFromEnv(bad), PolicyError, JSON.stringify(bad));
  }
});

/** A resolver we control, and a request function that records what would be connected to (and never connects). */
function spies(answers: Record<string, string[] | (() => string[])>) {
  const resolved: string[] = [];
  const connects: { host?: string | null; ip: string }[] = [];
  const resolve: Resolve = async (host) => {
    resolved.push(host);
    const v = answers[host];
    if (!v) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    const list = typeof v === 'function' ? v() : v;
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const request: Request = (_tls, options) => {
    let ip = options.host ?? '';
    // The address the connection would really use: what the pinned lookup answers.
    (options.lookup as unknown as (h: string, o: object, cb: (e: null, a: string) => void) => void)?.(options.host ?? '', {}, (_e, addr) => (ip = addr));
    connects.push({ host: options.host, ip });
    throw new Error('test: no connection');
  };
  return { resolve, request, resolved, connects };
}

test('a name resolving to a public and a private address is refused whole, nothing connected', async () => {
  const s = spies({ 'mixed.test': ['93.184.216.34', '10.0.0.5'] });
  await assert.rejects(openPull('http://mixed.test/x', { policy: none, ...s }), (e: unknown) => e instanceof PullRefused && /10\.0\.0\.5.*private/.test(e.reason));
  assert.deepEqual(s.connects, []);
});

test('the address checked is the address connected: a resolver that changes its answer (rebinding) is asked once per hop', async () => {
  let n = 0;
  const s = spies({ 'rebind.test': () => (n++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']) });
  await assert.rejects(openPull('http://rebind.test/x', { policy: none, ...s }), /no connection/);
  assert.deepEqual(s.resolved, ['rebind.test']);
  assert.deepEqual(s.connects, [{ host: 'rebind.test', ip: '93.184.216.34' }]);
});

test('refused literals and names never reach the request function', async () => {
  const s = spies({ 'meta.test': ['169.254.169.254'], 'v6.test': ['::ffff:7f00:1'], 'nat.test': ['64:ff9b::a9fe:a9fe'] });
  for (const u of [
    'http://2130706433/',
    'http://0177.0.0.1/',
    'http://0x7f.1/',
    'http://169.254.169.254/',
    'http://[::ffff:127.0.0.1]/',
    'http://meta.test/',
    'http://v6.test/',
    'http://nat.test/',
    'http://192.0.2.1/',
    'http://198.51.100.7/',
  ]) {
    await assert.rejects(openPull(u, { policy: none, ...s }), PullRefused, u);
  }
  await assert.rejects(openPull('http://unknown.test/', { policy: none, ...s }), PullFailed);
  assert.deepEqual(s.connects, []);
});

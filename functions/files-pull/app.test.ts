import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { listenForCancel } from '../../job/serve/cancel-server.ts';
import { MaintenanceBusyError } from '../../lib/maintenance/errors.ts';
import { startedView } from '../../lib/ops/view.ts';
import { jobToken, tokenDigest } from '../../lib/protocol/job-token.ts';
import { backgroundKit, realEditorKit } from '../../lib/testing/background-kit.ts';
import { FakeServerApi } from '../../lib/testing/fake-servers.ts';
import { felisServer } from '../../lib/testing/felis-fixtures.ts';
import { envelopeOf } from '../../lib/testing/route-kit.ts';
import { filesPull } from './app.ts';

const VIEW = startedView('0123456789abcdef', 'pull', 'plugins', new Date('2026-12-01T06:00:00Z'));
const PULL = '/api/v1/servers/survival/files/pull';

const kit = (opts: { start?: () => unknown } = {}) => backgroundKit(filesPull, { start: (req) => (opts.start ? opts.start() : { ...VIEW, path: req.path }) });

test('a pull starts its Job under the world lock, 202 with the op; the audit names the origin only', async () => {
  const k = kit();
  const r = await k.call('POST', PULL, { url: 'https://cdn.example.com/p/Mod.jar?sig=SECRET#frag', path: 'plugins/', name: 'mod.jar' });
  assert.equal(r.status, 202, r.text);
  assert.deepEqual(r.body, { op: VIEW });
  assert.deepEqual(k.starts, [{ req: { op: 'pull', path: 'plugins', url: 'https://cdn.example.com/p/Mod.jar?sig=SECRET#frag', to: 'mod.jar' }, locked: true }]);
  assert.deepEqual(k.gates.ran, [{ server: 'survival', access: { op: 'pull', path: 'plugins' } }]);
  const [a] = k.audits();
  assert.equal(a!.action, 'file.pull');
  assert.deepEqual(a!.payload, { origin: 'https://cdn.example.com', name: 'mod.jar', op: VIEW.id });
  assert.doesNotMatch(JSON.stringify(k.audits()), /SECRET|\/p\/Mod/);
  // The root as "" or "/".
  for (const path of ['', '/']) {
    const k2 = kit();
    assert.equal((await k2.call('POST', PULL, { url: 'http://example.com/a', path })).status, 202);
    assert.deepEqual(k2.gates.ran[0]!.access, { op: 'pull', path: '.' });
    assert.equal(k2.starts[0]!.req.path, '');
  }
});

test('the URL and the name are checked before the lock: each mistake a 400 naming it', async () => {
  const cases: Array<[unknown, string, RegExp]> = [
    [undefined, 'bad_request', /a JSON body is required/],
    [{ path: 'plugins' }, 'bad_request', /url/],
    [{ url: 'https://example.com/a' }, 'bad_request', /path/],
    [{ url: 'ftp://example.com/a', path: '' }, 'bad_request', /only http and https/],
    [{ url: 'file:///etc/passwd', path: '' }, 'bad_request', /only http and https/],
    [{ url: 'https://u:p@example.com/a', path: '' }, 'bad_request', /credentials/],
    [{ url: '/relative', path: '' }, 'bad_request', /absolute URL/],
    [{ url: `https://example.com/${'x'.repeat(5000)}`, path: '' }, 'bad_request', /at most 4096/],
    [{ url: 'https://example.com/a', path: '', name: 'a/b' }, 'bad_name', /must be one name, without a slash/],
    [{ url: 'https://example.com/a', path: '', name: 'a\\b' }, 'bad_name', /without a backslash/],
    [{ url: 'https://example.com/a', path: '', name: '..' }, 'bad_name', /cannot be \. or \.\./],
    [{ url: 'https://example.com/a', path: '', name: '' }, 'bad_name', /is empty/],
    [{ url: 'https://example.com/a', path: '', name: 'x'.repeat(256) }, 'bad_name', /255 bytes/],
    [{ url: 'https://example.com/a', path: '', name: 'evil\u202egpj.jar' }, 'bad_name', /bidirectional control character \(U\+202E\)/],
    [{ url: 'https://example.com/a', path: '', name: 'bell\u0007.jar' }, 'bad_name', /control character \(U\+0007\)/],
    [{ url: 'https://example.com/a', path: 'a\u0000b' }, 'bad_path', /NUL/],
    [{ url: 'https://example.com/a', path: '', extra: 1 }, 'bad_request', /unrecognized|extra/i],
  ];
  for (const [body, code, msg] of cases) {
    const k = kit();
    const r = await k.call('POST', PULL, body);
    assert.equal(r.status, 400, JSON.stringify(body) + r.text);
    assert.equal(envelopeOf(r).code, code, JSON.stringify(body));
    assert.match(envelopeOf(r).message, msg, JSON.stringify(body));
    assert.equal(k.gates.ran.length, 0);
    assert.equal(k.starts.length, 0);
  }
});

test('a held world is 409 maintenance_in_progress; nothing started or audited', async () => {
  const k = kit();
  k.gates.runError = new MaintenanceBusyError('a pull from a URL (pull of plugins)');
  const r = await k.call('POST', PULL, { url: 'https://example.com/a', path: 'plugins' });
  assert.equal(r.status, 409);
  assert.equal(envelopeOf(r).code, 'maintenance_in_progress');
  assert.equal(k.starts.length, 0);
  assert.equal(k.audits().length, 0);
});

/** Jobs and Pods in memory: the real editor creates the Job and finds its Pod by label. */
function knownServers(): FakeServerApi {
  const servers = new FakeServerApi();
  servers.put(felisServer('survival'));
  return servers;
}

const KEY = Buffer.alloc(32, 9);

test('the real editor: the pull Job carries the URL, the operator env and its cancel token digest; cancel reaches the Pod with the token', async () => {
  let port = 0;
  const k = realEditorKit(filesPull, {
    env: { FELIS_PULL_ALLOW: '127.0.0.1', FELIS_PULL_MAX_BYTES: '1000' },
    streamed: (jobs) => ({ keyFile: '/nonexistent', key: KEY, pods: jobs, port: () => port }),
    servers: knownServers(),
  });
  const jobs = k.jobs;
  const r = await k.call('POST', PULL, { url: 'http://127.0.0.1:9/file.bin', path: 'plugins' });
  assert.equal(r.status, 202, r.text + k.logs.join(''));
  const job = jobs.jobs[0]!;
  const c = job.spec!.template.spec!.containers[0]!;
  assert.deepEqual(c.args!.slice(-2), ['--url', 'http://127.0.0.1:9/file.bin']);
  const env = Object.fromEntries(c.env!.map((e) => [e.name, e.value]));
  assert.equal(env.FELIS_PULL_ALLOW, '127.0.0.1');
  assert.equal(env.FELIS_PULL_MAX_BYTES, '1000');
  const name = job.metadata!.name!;
  assert.equal(env.FELIS_SERVE_TOKEN_SHA256, tokenDigest(jobToken(KEY, name)));

  // The Job's own cancel listener on loopback plays the Pod.
  const listener = (await listenForCancel({ FELIS_POD_IP: '127.0.0.1', FELIS_SERVE_PORT: '0', FELIS_SERVE_TOKEN_SHA256: env.FELIS_SERVE_TOKEN_SHA256! }))!;
  after(() => listener.close());
  port = listener.port;
  const opId = r.body.op.id as string;
  const pod = (phase: string): V1Pod => ({
    metadata: { labels: { ...job.spec!.template.metadata!.labels } },
    status: {
      phase,
      podIP: '127.0.0.1',
      containerStatuses: [{ name: 'files', state: phase === 'Running' ? { running: {} } : { terminated: { exitCode: 0 } }, image: '', imageID: '', ready: true, restartCount: 0 }] as never,
    },
  });
  jobs.pods = [pod('Running')];
  const cancelled = await k.call('DELETE', `${PULL}/${opId}`);
  assert.equal(cancelled.status, 202, cancelled.text);
  assert.deepEqual(cancelled.body, { op: opId, status: 'cancelling' });
  assert.equal(listener.signal.aborted, true);

  jobs.pods = [pod('Succeeded')];
  const ended = await k.call('DELETE', `${PULL}/${opId}`);
  assert.equal(ended.status, 409);
  assert.equal(envelopeOf(ended).code, 'pull_not_running');
  const unknown = await k.call('DELETE', `${PULL}/ffffffffffffffff`);
  assert.equal(unknown.status, 404);
  const bad = await k.call('DELETE', `${PULL}/nope`);
  assert.equal(bad.status, 404);
});

test('without a job key a pull still starts (no cancel listener) and its cancel is 503 pull_cancel_unavailable', async () => {
  const k = realEditorKit(filesPull, { servers: knownServers() });
  const jobs = k.jobs;
  assert.equal((await k.call('POST', PULL, { url: 'https://example.com/a', path: '' })).status, 202);
  const c = jobs.jobs[0]!.spec!.template.spec!.containers[0]!;
  assert.equal(c.ports, undefined);
  assert.equal(
    (c.env ?? []).some((e) => e.name === 'FELIS_SERVE_TOKEN_SHA256'),
    false,
  );
  const r = await k.call('DELETE', `${PULL}/0123456789abcdef`);
  assert.equal(r.status, 503);
  assert.equal(envelopeOf(r).code, 'pull_cancel_unavailable');
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { holdState, jobKind } from '../maintenance/holder.ts';
import { exportCommand, renderExportJob } from './export-job.ts';
import { jobParams } from './params.test-kit.ts';
import { ARCHIVE_NODE_OPTIONS, filesJobName, type JobParams, JobSpecError, renderBrowseJob, renderFilesJob } from './render.ts';

const base = jobParams();

test('identity: name, labels on Job and Pod, no annotations on a sync read Job', () => {
  const job = renderFilesJob(base);
  assert.equal(job.metadata!.name, 'files-survival-0123456789abcdef');
  const labels = {
    'app.kubernetes.io/managed-by': 'felis-files',
    'app.kubernetes.io/component': 'world-files',
    'felis.lolicon.best/server': 'survival',
    'felis.lolicon.best/files-op': '0123456789abcdef',
    'felis.lolicon.best/files-mode': 'read',
  };
  assert.deepEqual(job.metadata!.labels, labels);
  assert.deepEqual(job.spec!.template.metadata!.labels, labels);
  assert.equal(job.metadata!.annotations, undefined);
  // A longest server name still leaves the Pod name (job + "-" + 5) within 63.
  assert.ok(filesJobName('a'.repeat(32), '0123456789abcdef').length + 6 <= 63);
});

test('read: read-only mount, non-root with no capability, requests equal limits, no env', () => {
  const job = renderFilesJob(base);
  const pod = job.spec!.template.spec!;
  const c = pod.containers[0]!;
  assert.equal(job.spec!.backoffLimit, 0);
  assert.equal(job.spec!.activeDeadlineSeconds, 120);
  assert.equal(job.spec!.ttlSecondsAfterFinished, 120);
  assert.equal(pod.restartPolicy, 'Never');
  assert.equal(pod.automountServiceAccountToken, false);
  assert.equal(pod.serviceAccountName, 'felis-restore');
  assert.deepEqual(pod.volumes, [{ name: 'world', persistentVolumeClaim: { claimName: 'world-survival-0', readOnly: true } }]);
  assert.equal(c.name, 'files');
  assert.deepEqual(c.command, ['/usr/local/bin/felis', 'files']);
  assert.deepEqual(c.args, ['--op', 'read', '--path', 'server.properties', '--worlds-root', '/data']);
  assert.equal(c.env, undefined);
  assert.deepEqual(c.volumeMounts, [{ name: 'world', mountPath: '/data', readOnly: true }]);
  assert.deepEqual(c.resources, { requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: '500m', memory: '256Mi' } });
  // Reading needs no root: the game's uid owns the world (PodSecurity restricted fits).
  assert.deepEqual(c.securityContext!.capabilities, { drop: ['ALL'] });
  assert.equal(c.securityContext!.readOnlyRootFilesystem, true);
  assert.equal(c.securityContext!.allowPrivilegeEscalation, false);
  assert.deepEqual(pod.securityContext, { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } });
  assert.equal(pod.nodeSelector, undefined);
});

test('list, search, browse and export Jobs run as the game uid with no capability; writing Jobs as root with only theirs', () => {
  const nonRoot = { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } };
  const jobs = {
    list: renderFilesJob({ ...base, op: 'list' }),
    search: renderFilesJob({ ...base, op: 'search', q: 'level' }),
    browse: renderBrowseJob({ ...base, tokenSha256: 'a'.repeat(64), idleSeconds: 60, lifetimeSeconds: 540 }),
    export: renderExportJob({ ...base, command: exportCommand(base.command), exportId: '0123456789abcdef', path: 'a', dir: true, tokenSha256: 'a'.repeat(64), idleSeconds: 60 }),
  };
  for (const [what, job] of Object.entries(jobs)) {
    assert.deepEqual(job.spec!.template.spec!.securityContext, nonRoot, what);
    assert.deepEqual(job.spec!.template.spec!.containers[0]!.securityContext!.capabilities, { drop: ['ALL'] }, what);
  }
  // A configured uid is kept for them too.
  assert.equal(renderFilesJob({ ...base, op: 'list', runAsUser: 1001, runAsGroup: 1002 }).spec!.template.spec!.securityContext!.runAsUser, 1001);
  for (const op of ['write', 'mkdir', 'delete', 'rename', 'unzip', 'zip'] as const) {
    const pod = renderFilesJob({ ...base, op, content: op === 'write' ? Buffer.from('x') : undefined }).spec!.template.spec!;
    assert.deepEqual(pod.securityContext, { runAsNonRoot: false, runAsUser: 0, runAsGroup: 0, seccompProfile: { type: 'RuntimeDefault' } }, op);
    assert.ok(pod.containers[0]!.securityContext!.capabilities!.add!.includes('DAC_OVERRIDE'), op);
  }
});

test("the trash listing runs as the writing Jobs' user (the trash is theirs alone), with no capability, on the read-only world", () => {
  for (const runAsUser of [undefined, 4242]) {
    const job = renderFilesJob({ ...base, op: 'trash-list', path: '', ...(runAsUser ? { runAsUser } : {}) });
    const writer = renderFilesJob({ ...base, op: 'delete', path: 'a', ...(runAsUser ? { runAsUser } : {}) });
    const pod = job.spec!.template.spec!;
    assert.equal(pod.securityContext!.runAsUser, writer.spec!.template.spec!.securityContext!.runAsUser);
    assert.equal(pod.securityContext!.runAsUser, runAsUser ?? 0);
    assert.equal(pod.securityContext!.runAsNonRoot, false);
    assert.deepEqual(pod.containers[0]!.securityContext!.capabilities, { drop: ['ALL'] });
    assert.equal(pod.volumes![0]!.persistentVolumeClaim!.readOnly, true);
    assert.equal(pod.containers[0]!.volumeMounts![0]!.readOnly, true);
  }
});

test('write: RW mount, CHOWN, digest args and content parts in env, never in args', () => {
  const content = Buffer.alloc(98305, 7);
  const job = renderFilesJob({ ...base, op: 'write', content, sha256: 'ab'.repeat(32), expectSha256: 'cd'.repeat(32), createOnly: true });
  const c = job.spec!.template.spec!.containers[0]!;
  assert.deepEqual(c.args, ['--op', 'write', '--path', 'server.properties', '--worlds-root', '/data', '--sha256', 'ab'.repeat(32), '--expect-sha256', 'cd'.repeat(32), '--create-only']);
  assert.deepEqual(c.securityContext!.capabilities!.add, ['CHOWN', 'DAC_OVERRIDE']);
  assert.equal(job.spec!.template.spec!.volumes![0]!.persistentVolumeClaim!.readOnly, false);
  const env = c.env!;
  assert.deepEqual(env[0], { name: 'FELIS_FILE_CONTENT_PARTS', value: '3' });
  assert.equal(env.length, 4);
  const joined = env
    .slice(1)
    .map((e) => e.value)
    .join('');
  assert.deepEqual(Buffer.from(joined, 'base64'), content);
  assert.ok(!JSON.stringify(c.args).includes(joined.slice(0, 100)));
});

test("a streamed write: --receive after Felis's args, the serving env and port, the token digest only, no content anywhere; labels as any write", () => {
  const plain = renderFilesJob({ ...base, op: 'write', content: Buffer.from('x'), sha256: 'ab'.repeat(32), createOnly: true });
  const job = renderFilesJob({ ...base, op: 'write', contentTokenSha256: 'ef'.repeat(32), sha256: 'ab'.repeat(32), createOnly: true });
  const c = job.spec!.template.spec!.containers[0]!;
  assert.deepEqual(c.args, [...plain.spec!.template.spec!.containers[0]!.args!, '--receive']);
  assert.deepEqual(c.env, [
    { name: 'FELIS_POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
    { name: 'FELIS_SERVE_PORT', value: '8420' },
    { name: 'FELIS_SERVE_TOKEN_SHA256', value: 'ef'.repeat(32) },
    { name: 'FELIS_SERVE_IDLE_SECONDS', value: '10' },
    { name: 'FELIS_SERVE_LIFETIME_SECONDS', value: '60' },
  ]);
  assert.deepEqual(c.ports, [{ name: 'receive', containerPort: 8420, protocol: 'TCP' }]);
  assert.ok(!JSON.stringify(job).includes('FELIS_FILE_CONTENT'));
  // It holds the world exactly as the env-var write Job does: same labels, only the mark of a change of ours, RW, CHOWN.
  assert.deepEqual(job.metadata!.labels, plain.metadata!.labels);
  assert.deepEqual(job.spec!.template.metadata!.labels, plain.spec!.template.metadata!.labels);
  assert.deepEqual(job.metadata!.annotations, { 'felis.lolicon.best/files-change': 'felis-world' });
  assert.equal(job.spec!.template.spec!.volumes![0]!.persistentVolumeClaim!.readOnly, false);
  assert.deepEqual(c.securityContext, plain.spec!.template.spec!.containers[0]!.securityContext);
  assert.equal(job.spec!.activeDeadlineSeconds, plain.spec!.activeDeadlineSeconds);
  assert.equal(plain.spec!.template.spec!.containers[0]!.ports, undefined);
  // …and so the maintenance rules see the same holder: a file write, by its op, while unfinished.
  assert.equal(jobKind(job), 'file-write');
  assert.deepEqual(holdState('survival', undefined, [job], new Date()), holdState('survival', undefined, [plain], new Date()));
  assert.equal(holdState('survival', undefined, [job], new Date()).holder?.kind, 'file-write');
});

test('delete and rename get DAC_OVERRIDE only; rename carries --to', () => {
  assert.deepEqual(renderFilesJob({ ...base, op: 'delete' }).spec!.template.spec!.containers[0]!.securityContext!.capabilities!.add, ['DAC_OVERRIDE']);
  const r = renderFilesJob({ ...base, op: 'rename', to: 'b.txt', createOnly: true });
  assert.deepEqual(r.spec!.template.spec!.containers[0]!.args!.slice(6), ['--to', 'b.txt']);
});

test('node pinning, fsGroup only when positive, deadline/TTL fallbacks', () => {
  const job = renderFilesJob({ ...base, nodeName: 'node-a', fsGroup: 1000, deadlineSeconds: 0, ttlSeconds: -5 });
  assert.deepEqual(job.spec!.template.spec!.nodeSelector, { 'felis.node-restriction.kubernetes.io/identity': 'node-a' });
  assert.equal(job.spec!.template.spec!.securityContext!.fsGroup, 1000);
  assert.equal(job.spec!.activeDeadlineSeconds, 120);
  assert.equal(job.spec!.ttlSecondsAfterFinished, 120);
});

test('async unzip gets the async label, the path annotation and the mark of a change of ours', () => {
  const job = renderFilesJob({ ...base, op: 'unzip', path: 'a.zip', async: true, overwrite: true });
  assert.equal(job.metadata!.labels!['felis.lolicon.best/files-async'], 'true');
  assert.deepEqual(job.metadata!.annotations, { 'felis.lolicon.best/files-path': 'a.zip', 'felis.lolicon.best/files-change': 'felis-world' });
  assert.deepEqual(job.spec!.template.spec!.containers[0]!.args!.slice(6), ['--overwrite']);
});

test("the unzip Job runs with heap limits sized for its container, in NODE_OPTIONS, and is told its op id from its own label (the command line stays Felis's)", () => {
  const job = renderFilesJob({ ...base, op: 'unzip', path: 'a.zip', async: true });
  const c = job.spec!.template.spec!.containers[0]!;
  assert.deepEqual(c.env, [
    { name: 'NODE_OPTIONS', value: ARCHIVE_NODE_OPTIONS },
    { name: 'FELIS_OP_ID', valueFrom: { fieldRef: { fieldPath: "metadata.labels['felis.lolicon.best/files-op']" } } },
  ]);
  assert.equal(job.spec!.template.metadata!.labels!['felis.lolicon.best/files-op'], job.metadata!.labels!['felis.lolicon.best/files-op'], 'the Pod carries the label the env reads');
  assert.match(ARCHIVE_NODE_OPTIONS, /--max-old-space-size=\d+/);
  assert.deepEqual(c.command, base.command);
  assert.equal(renderFilesJob({ ...base, op: 'list', path: '' }).spec!.template.spec!.containers[0]!.env, undefined);
});

test('unzip and zip take --to after the base args; zip is a background op that may chown', () => {
  const unzip = renderFilesJob({ ...base, op: 'unzip', path: 'a.zip', async: true, to: 'maps/new' });
  assert.deepEqual(unzip.spec!.template.spec!.containers[0]!.args, ['--op', 'unzip', '--path', 'a.zip', '--worlds-root', '/data', '--to', 'maps/new']);
  const both = renderFilesJob({ ...base, op: 'unzip', path: 'a.zip', async: true, overwrite: true, to: 'x' });
  assert.deepEqual(both.spec!.template.spec!.containers[0]!.args!.slice(6), ['--overwrite', '--to', 'x']);
  const zip = renderFilesJob({ ...base, op: 'zip', path: 'world', async: true });
  assert.deepEqual(zip.spec!.template.spec!.containers[0]!.args, ['--op', 'zip', '--path', 'world', '--worlds-root', '/data']);
  assert.deepEqual(zip.metadata!.annotations, { 'felis.lolicon.best/files-path': 'world', 'felis.lolicon.best/files-change': 'felis-world' });
  const c = zip.spec!.template.spec!.containers[0]!;
  assert.deepEqual(c.securityContext!.capabilities!.add, ['CHOWN', 'DAC_OVERRIDE']);
  assert.equal(c.volumeMounts![0]!.readOnly, false);
  const named = renderFilesJob({ ...base, op: 'zip', path: 'world', async: true, to: 'backup.zip' });
  assert.deepEqual(named.spec!.template.spec!.containers[0]!.args!.slice(6), ['--to', 'backup.zip']);
});

test('render-time validation, in order', () => {
  const cases: [Partial<JobParams>, RegExp][] = [
    [{ image: '' }, /image/],
    [{ worldPvc: '' }, /claim/],
    [{ opId: '' }, /operation id/],
    [{ op: 'chmod' }, /unknown operation/],
    [{ op: 'read', contentTokenSha256: 'a'.repeat(64) }, /takes no streamed content/],
    [{ op: 'write', contentTokenSha256: 'A'.repeat(64) }, /token digest/],
    [{ op: 'write', contentTokenSha256: 'a'.repeat(64), content: Buffer.from('x') }, /carries no content/],
    [{ op: 'upload' }, /source URL and a token/],
    [{ op: 'read', async: true }, /background/],
    [{ op: 'mkdir', async: true }, /background/],
    [{ cpu: 'half' }, /cpu quantity/],
    [{ memory: '1 Gi' }, /memory quantity/],
  ];
  for (const [over, msg] of cases) {
    assert.throws(
      () => renderFilesJob({ ...base, ...over }),
      (e: Error) => e instanceof JobSpecError && msg.test(e.message),
      JSON.stringify(over),
    );
  }
  assert.doesNotThrow(() => renderFilesJob({ ...base, op: 'write', content: Buffer.alloc(262144) }));
  assert.equal(renderFilesJob({ ...base, cpu: '' }).spec!.template.spec!.containers[0]!.resources!.limits!.cpu, '500m');
});

test("a listing carries --limit, --after and --q only when given, after Felis's args; without them its command line is Felis's", () => {
  const args = (p: Partial<JobParams>) => renderFilesJob({ ...base, op: 'list', path: 'world', ...p }).spec!.template.spec!.containers[0]!.args!;
  assert.deepEqual(args({}), ['--op', 'list', '--path', 'world', '--worlds-root', '/data']);
  assert.deepEqual(args({ limit: 500 }), ['--op', 'list', '--path', 'world', '--worlds-root', '/data', '--limit', '500']);
  assert.deepEqual(args({ limit: 1000, after: '-b', q: 'Ä' }).slice(6), ['--limit', '1000', '--after', '-b', '--q', 'Ä']);
  assert.deepEqual(args({ q: '' }).slice(6), ['--q', '']);
  // Another op never takes them.
  assert.deepEqual(renderFilesJob({ ...base, op: 'read', limit: 5 }).spec!.template.spec!.containers[0]!.args!, ['--op', 'read', '--path', 'server.properties', '--worlds-root', '/data']);
});

test("a browse Job runs with the archive ops' heap limits, in NODE_OPTIONS (its listings scan folders of any size)", () => {
  const env = renderBrowseJob({ ...base, tokenSha256: 'a'.repeat(64), idleSeconds: 60, lifetimeSeconds: 540 }).spec!.template.spec!.containers[0]!.env!;
  assert.deepEqual(
    env.find((e) => e.name === 'NODE_OPTIONS'),
    { name: 'NODE_OPTIONS', value: ARCHIVE_NODE_OPTIONS },
  );
  assert.deepEqual(
    env.find((e) => e.name === 'FELIS_SCRATCH_DIR'),
    { name: 'FELIS_SCRATCH_DIR', value: '/scratch' },
  );
  // Its list indexes' scratch folder is an emptyDir of its own, mounted there; the world stays read-only.
  const pod = renderBrowseJob({ ...base, tokenSha256: 'a'.repeat(64), idleSeconds: 60, lifetimeSeconds: 540 }).spec!.template.spec!;
  assert.deepEqual(
    pod.volumes!.find((v) => v.name === 'scratch'),
    { name: 'scratch', emptyDir: { sizeLimit: '320Mi' } },
  );
  assert.equal(pod.containers[0]!.volumeMounts!.find((m) => m.name === 'scratch')?.mountPath, '/scratch');
});

test('a copy Job: --to only when given, --max-size only for a sync copy; background allowed, heap limited', () => {
  const base = {
    namespace: 'ns',
    server: 's1',
    opId: 'abcd',
    worldPvc: 'w',
    image: 'img',
    command: ['felis', 'files'],
    serviceAccount: 'sa',
    worldsRoot: '/data',
    deadlineSeconds: 120,
    ttlSeconds: 120,
  };
  const argsOf = (j: ReturnType<typeof renderFilesJob>) => j.spec!.template.spec!.containers[0].args;
  assert.deepEqual(argsOf(renderFilesJob({ ...base, op: 'copy', path: 'plugins' })), ['--op', 'copy', '--path', 'plugins', '--worlds-root', '/data']);
  assert.deepEqual(argsOf(renderFilesJob({ ...base, op: 'copy', path: 'a.txt', to: 'b.txt', maxSize: 67108864 })), [
    '--op',
    'copy',
    '--path',
    'a.txt',
    '--worlds-root',
    '/data',
    '--to',
    'b.txt',
    '--max-size',
    '67108864',
  ]);
  const bg = renderFilesJob({ ...base, op: 'copy', path: 'plugins', async: true });
  assert.deepEqual(bg.spec!.template.spec!.containers[0].securityContext!.capabilities!.add, ['CHOWN', 'DAC_OVERRIDE']);
  assert.equal(bg.spec!.template.spec!.containers[0].env!.find((e) => e.name === 'NODE_OPTIONS')?.value, ARCHIVE_NODE_OPTIONS);
});

test('a search Job: read-only world, its query as flags (the limit only when asked for), and it holds nothing', () => {
  const job = renderFilesJob({ ...base, op: 'search', path: 'world', q: '*.yml', limit: 50 });
  const c = job.spec!.template.spec!.containers[0]!;
  assert.deepEqual(c.args, ['--op', 'search', '--path', 'world', '--worlds-root', '/data', '--limit', '50', '--q', '*.yml']);
  assert.equal(job.spec!.template.spec!.volumes![0]!.persistentVolumeClaim!.readOnly, true);
  assert.equal(job.metadata!.labels!['felis.lolicon.best/files-mode'], 'search');
  assert.equal(jobKind(job), undefined, 'a search holds no world');
  assert.deepEqual(renderFilesJob({ ...base, op: 'search', path: '', q: 'level' }).spec!.template.spec!.containers[0]!.args, [
    '--op',
    'search',
    '--path',
    '',
    '--worlds-root',
    '/data',
    '--q',
    'level',
  ]);
});

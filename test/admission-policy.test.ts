/**
 * The Job admission policy (knative/components/admission-policy), evaluated the way the apiserver
 * evaluates a ValidatingAdmissionPolicy: its match condition on the requesting user, then its
 * variables in order, then every validation, each against the Job as `object`, the policy's
 * parameter (the rendered felis-world-job-policy ConfigMap) as `params` and the request as
 * `request`. A validation that is false, or that errors (failurePolicy Fail), refuses the Job
 * with its message.
 *
 * The expressions run on @bufbuild/cel with its `strings` extension, which provides the two
 * functions of Kubernetes' strings library the policy uses (`join`, `substring`; `endsWith` and
 * `startsWith` are standard CEL). What this cannot show: Kubernetes' type check of the
 * expressions against the OpenAPI schema and its cost estimate; both happen only on a real
 * apiserver (>= 1.30).
 *
 * Every Job each renderer makes with the deployed settings is admitted; each hostile variant is
 * refused by exactly the validation that names what it changed.
 */

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { isCelError, run } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import type { V1Job } from '@kubernetes/client-node';
import { configFromEnv } from '../lib/config.ts';
import { exportCommand, renderExportJob } from '../lib/job-spec/export-job.ts';
import { renderBrowseJob, renderEditJob, renderFilesJob } from '../lib/job-spec/render.ts';
import { renderReceiverJob } from '../lib/job-spec/upload-job.ts';
import { byKind, type Obj, render } from './support/kustomize.ts';
import { ROOT } from './support/stack.ts';

const objs = render(join(ROOT, 'knative'), { components: ['admission-policy'] });
const policy = byKind(objs, 'ValidatingAdmissionPolicy').values().next().value!;
const binding = byKind(objs, 'ValidatingAdmissionPolicyBinding').values().next().value!;
const params = byKind(objs, 'ConfigMap').get(binding.spec.paramRef.name)!;
const NS = params.data.FELIS_NAMESPACE as string;

/** Kubernetes gives CEL integers as `int`: JS numbers that are integers become bigint. */
function celInput(v: unknown): any {
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (Array.isArray(v)) return v.map(celInput);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== undefined)
        .map(([k, x]) => [k, celInput(x)]),
    );
  return v;
}

const ERRORED = Symbol('errored');

function evaluate(expr: string, bindings: Record<string, unknown>): unknown {
  try {
    const r = run(expr, bindings as Record<string, never>, { funcs: strings });
    return isCelError(r) ? ERRORED : r;
  } catch {
    return ERRORED;
  }
}

const requestBy = (sa: string) => ({ userInfo: { username: `system:serviceaccount:${NS}:${sa}` }, namespace: NS, operation: 'CREATE' });

/** Whether the policy applies to the request, and which validations' messages refuse the Job. */
function admit(job: unknown, sa = 'felis-world-files-write'): { matched: boolean; refused: string[] } {
  // What the apiserver stores: JSON, no undefined fields.
  const object = celInput(JSON.parse(JSON.stringify(job)));
  const request = celInput(requestBy(sa));
  for (const m of policy.spec.matchConditions) if (evaluate(m.expression, { object, request }) !== true) return { matched: false, refused: [] };
  const variables: Record<string, unknown> = {};
  const errored = new Set<string>();
  for (const v of policy.spec.variables) {
    const r = evaluate(v.expression, { object, request, params: celInput(params), variables });
    if (r === ERRORED) errored.add(v.name);
    else variables[v.name] = r;
  }
  const refused: string[] = [];
  for (const val of policy.spec.validations) {
    // A variable that errored errors every validation that reads it.
    const uses = [...val.expression.matchAll(/variables\.(\w+)/g)].map((m) => m[1]!);
    const r = uses.some((u) => errored.has(u)) ? ERRORED : evaluate(val.expression, { object, request, params: celInput(params), variables });
    if (r !== true) refused.push(val.message);
  }
  return { matched: true, refused };
}

const messageOf = (prefix: string) => {
  const m = policy.spec.validations.map((v: { message: string }) => v.message).filter((x: string) => x.startsWith(prefix));
  assert.equal(m.length, 1, `one validation message starts with ${JSON.stringify(prefix)}: ${m.join(' | ')}`);
  return m[0] as string;
};

// The settings the functions run with: the rendered ConfigMap, as lib/config.ts reads it.
const settings = configFromEnv(params.data).editor!;
const base = { ...settings, server: 'survival', opId: 'b0123456789abcde', worldPvc: 'world-survival-0', nodeName: 'node-a' };
const digest = 'a'.repeat(64);

/** Every Job the renderers make, as the functions call them (lib/files, lib/ops, lib/browse, lib/uploads, lib/downloads). */
function everyRenderedJob(): Record<string, V1Job> {
  const jobs: Record<string, V1Job> = {
    'one-shot list': renderFilesJob({ ...base, op: 'list', path: 'world' }),
    'one-shot read': renderFilesJob({ ...base, op: 'read', path: 'server.properties' }),
    'one-shot search': renderFilesJob({ ...base, op: 'search', path: '', q: '*.yml', limit: 1000 }),
    'one-shot write': renderFilesJob({ ...base, op: 'write', path: 'a.txt', content: Buffer.from('hello'), sha256: digest, expectSha256: digest, createOnly: true }),
    'one-shot mkdir': renderFilesJob({ ...base, op: 'mkdir', path: 'd' }),
    'one-shot delete': renderFilesJob({ ...base, op: 'delete', path: 'd' }),
    'one-shot rename': renderFilesJob({ ...base, op: 'rename', path: 'a', to: 'b' }),
    'many-file delete': renderFilesJob({ ...base, op: 'delete-many', path: 'logs', batch: { paths: ['logs/a', 'logs/b'] } }),
    'many-file move': renderFilesJob({ ...base, op: 'move-many', path: '.', batch: { moves: [{ from: 'a', to: 'b' }] } }),
    'many-file chmod (FOWNER)': renderFilesJob({ ...base, op: 'chmod-many', path: '.', batch: { files: [{ path: 'a', mode: '755' }] } }),
    'streamed write (content on the Pod address)': renderFilesJob({ ...base, op: 'write', path: 'a.txt', sha256: digest, contentTokenSha256: digest }),
    'an event-keyed write': renderFilesJob({ ...base, op: 'write', path: 'a.txt', content: Buffer.from('x'), sha256: digest, eventKey: 'e'.repeat(40) }),
    'background unzip': renderFilesJob({ ...base, op: 'unzip', path: 'a.zip', to: 'x', overwrite: true, async: true, deadlineSeconds: 7200, ttlSeconds: 1800, cpu: '1' }),
    'background zip': renderFilesJob({ ...base, op: 'zip', path: 'world', to: 'w.zip', async: true }),
    'background compress': renderFilesJob({ ...base, op: 'compress', path: 'plugins', batch: { paths: ['plugins/a', 'plugins/b.jar'] }, format: 'tar.zst', to: 'p.tar.zst', async: true }),
    'background region prune': renderFilesJob({ ...base, op: 'region-prune', path: 'world', below: '72000', async: true }),
    'region table (read-only)': renderFilesJob({ ...base, op: 'region', path: 'world/region/r.0.0.mca' }),
    'trash listing (read-only)': renderFilesJob({ ...base, op: 'trash-list', path: '', limit: 50, after: '0190a1b2c3d4e5f6' }),
    'trash restore': renderFilesJob({ ...base, op: 'trash-restore', path: '', trashId: '0190a1b2c3d4e5f6', to: 'restored', trash: { enabled: true, seconds: 604800, actor: 'bearer' } }),
    'trash purge of one': renderFilesJob({ ...base, op: 'trash-purge', path: '', trashId: '0190a1b2c3d4e5f6' }),
    'trash purge of all': renderFilesJob({ ...base, op: 'trash-purge', path: '' }),
    'a delete told of the trash': renderFilesJob({ ...base, op: 'delete', path: 'a', trash: { enabled: false, seconds: 60, actor: 'system:serviceaccount:games:panel' } }),
    'sync copy': renderFilesJob({ ...base, op: 'copy', path: 'a.txt', maxSize: 64 << 20 }),
    'background copy': renderFilesJob({ ...base, op: 'copy', path: 'plugins', to: 'plugins copy', async: true }),
    'background pull (mode read, read-write, its cancel port, the operator env)': renderFilesJob({
      ...base,
      op: 'pull',
      path: 'plugins',
      url: 'https://example.com/a.jar',
      to: 'a.jar',
      async: true,
      pullEnv: { FELIS_PULL_ALLOW: '127.0.0.1' },
      cancelTokenSha256: digest,
    }),
    'placement of a pulled file': renderFilesJob({ ...base, op: 'pull-place', path: 'plugins', to: 'a.jar', pullOp: 'c0123456789abcde' }),
    'browse session': renderBrowseJob({ ...base, tokenSha256: digest, idleSeconds: 60, lifetimeSeconds: 540 }),
    'edit session (read-write, FOWNER, holds nothing)': renderEditJob({ ...base, opId: 'e0123456789abcde', tokenSha256: digest, idleSeconds: 60, lifetimeSeconds: 540 }),
    'single upload receiver': renderReceiverJob({ ...base, opId: 'u0123456789abcde', tokenSha256: digest, once: true, idleSeconds: 10, lifetimeSeconds: 540 }),
    'upload session receiver': renderReceiverJob({
      ...base,
      opId: 'u0123456789abcde',
      tokenSha256: digest,
      once: false,
      session: 'c'.repeat(32),
      path: 'big.bin',
      idleSeconds: 1800,
      lifetimeSeconds: 21600,
    }),
    'file export': renderExportJob({ ...base, command: exportCommand(settings.command), exportId: '0123456789abcdef', path: 'a.txt', dir: false, tokenSha256: digest, idleSeconds: 60 }),
    'folder export': renderExportJob({
      ...base,
      command: exportCommand(settings.command),
      exportId: '0123456789abcdef',
      path: 'world',
      dir: true,
      tokenSha256: digest,
      idleSeconds: 60,
      deadlineSeconds: 7200,
    }),
  };
  // The configured Pod identity (FELIS_JOB_RUN_AS_USER and friends) is kept.
  jobs['write with a configured uid and fsGroup'] = renderFilesJob({ ...base, op: 'write', path: 'a', content: Buffer.from('x'), runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 });
  jobs['read with a configured uid'] = renderFilesJob({ ...base, op: 'read', path: 'a', runAsUser: 1001, runAsGroup: 1001 });
  return jobs;
}

type Pod = NonNullable<NonNullable<V1Job['spec']>['template']['spec']>;
/** A copy of a rendered Job, changed by `edit` (its Pod spec, the Job, and the copy's labels). */
function variant(job: V1Job, edit: (pod: Pod, job: V1Job) => void): V1Job {
  const j = structuredClone(job);
  edit(j.spec!.template.spec!, j);
  return j;
}
const c0 = (pod: Pod) => pod.containers[0]!;

describe('the Job admission policy', () => {
  test('the component renders a v1 policy bound in its own namespace, with the settings the functions run with', () => {
    assert.equal(policy.apiVersion, 'admissionregistration.k8s.io/v1');
    assert.equal(binding.spec.policyName, policy.metadata.name);
    assert.deepEqual(binding.spec.validationActions, ['Deny']);
    assert.equal(binding.spec.paramRef.parameterNotFoundAction, 'Deny');
    assert.equal(policy.spec.failurePolicy, 'Fail');
    assert.equal(params.data.FELIS_IMAGE, configFromEnv(params.data).editor!.image);
    assert.match(params.data.FELIS_IMAGE, /felis-world/);
    assert.ok(policy.spec.validations.length >= 12);
  });

  test("it applies to the file functions only: not to settle (the restore template is the operator's) nor to anyone else", () => {
    const job = everyRenderedJob()['one-shot read']!;
    for (const sa of ['felis-world-files-read', 'felis-world-files-write', 'felis-world-files-upload', 'felis-world-files-download']) assert.equal(admit(job, sa).matched, true, sa);
    for (const sa of ['felis-world-settle', 'felis-world-holder', 'felis-world-job-watcher']) assert.equal(admit(job, sa).matched, false, sa);
    const other = celInput({ userInfo: { username: 'system:serviceaccount:other-ns:felis-world-files-read' }, namespace: NS });
    assert.notEqual(evaluate(policy.spec.matchConditions[0].expression, { request: other }), true, 'a function of another namespace');
  });

  test('every Job each renderer makes is admitted', () => {
    const jobs = everyRenderedJob();
    assert.ok(Object.keys(jobs).length >= 16);
    for (const [what, job] of Object.entries(jobs)) assert.deepEqual(admit(job), { matched: true, refused: [] }, what);
  });

  test('each hostile variant is refused, by exactly the rule it breaks', () => {
    const jobs = everyRenderedJob();
    const write = jobs['one-shot write']!;
    const read = jobs['one-shot read']!;
    const folderExport = jobs['folder export']!;
    const cases: [string, V1Job, string][] = [
      ['another image', variant(write, (p) => (c0(p).image = 'busybox:latest')), 'image:'],
      ['the same image by another tag', variant(write, (p) => (c0(p).image = `${params.data.FELIS_IMAGE}-evil`)), 'image:'],
      ['a shell as the command', variant(write, (p) => (c0(p).command = ['sh', '-c', 'cat /proc/1/environ'])), 'command:'],
      ['another ServiceAccount', variant(write, (p) => (p.serviceAccountName = 'felis-world-files-write')), 'serviceAccount:'],
      ['an automounted token', variant(write, (p) => (p.automountServiceAccountToken = true)), 'automountServiceAccountToken:'],
      ['a Secret volume', variant(write, (p) => p.volumes!.push({ name: 'key', secret: { secretName: 'felis-world-job-key' } })), 'volumes:'],
      ['a projected Secret', variant(write, (p) => p.volumes!.push({ name: 'key', projected: { sources: [{ secret: { name: 'felis-world-token' } }] } })), 'volumes:'],
      ['a projected ServiceAccount token', variant(write, (p) => p.volumes!.push({ name: 't', projected: { sources: [{ serviceAccountToken: { path: 'token', audience: 'x' } }] } })), 'volumes:'],
      ['a hostPath volume', variant(write, (p) => p.volumes!.push({ name: 'root', hostPath: { path: '/' } })), 'volumes:'],
      ['a second claim', variant(write, (p) => p.volumes!.push({ name: 'other', persistentVolumeClaim: { claimName: 'world-other-0' } })), 'volumes:'],
      ['envFrom a Secret', variant(write, (p) => (c0(p).envFrom = [{ secretRef: { name: 'felis-world-token' } }])), 'envFrom:'],
      ['an env value from a Secret key', variant(write, (p) => c0(p).env!.push({ name: 'K', valueFrom: { secretKeyRef: { name: 'felis-world-job-key', key: 'key' } } })), 'env:'],
      ['hostNetwork', variant(write, (p) => (p.hostNetwork = true)), 'hostNetwork:'],
      ['hostPID', variant(write, (p) => (p.hostPID = true)), 'hostPID:'],
      ['hostIPC', variant(write, (p) => (p.hostIPC = true)), 'hostIPC:'],
      ['a host port', variant(jobs['browse session']!, (p) => (c0(p).ports![0]!.hostPort = 8420)), 'hostPort:'],
      ['privileged', variant(write, (p) => (c0(p).securityContext!.privileged = true)), 'privileged:'],
      ['privilege escalation', variant(write, (p) => (c0(p).securityContext!.allowPrivilegeEscalation = true)), 'allowPrivilegeEscalation:'],
      ['a writable root filesystem', variant(write, (p) => (c0(p).securityContext!.readOnlyRootFilesystem = false)), 'readOnlyRootFilesystem:'],
      ['capabilities not dropped', variant(write, (p) => (c0(p).securityContext!.capabilities!.drop = [])), 'capabilities: drop ALL'],
      ['SYS_ADMIN added', variant(write, (p) => c0(p).securityContext!.capabilities!.add!.push('SYS_ADMIN')), 'capabilities: add only'],
      ['FOWNER on a Job that is not a chmod-many', variant(write, (p) => c0(p).securityContext!.capabilities!.add!.push('FOWNER')), 'capabilities: add only'],
      ['a read Job with DAC_OVERRIDE', variant(read, (p) => (c0(p).securityContext!.capabilities!.add = ['DAC_OVERRIDE'])), 'capabilities: a list, read, search or export'],
      ['a read Job as root', variant(read, (p) => (p.securityContext = { ...p.securityContext, runAsNonRoot: false, runAsUser: 0 })), 'non-root:'],
      ['a read Job whose container runs as root', variant(read, (p) => (c0(p).securityContext!.runAsUser = 0)), 'non-root:'],
      [
        'a trash listing with DAC_OVERRIDE',
        variant(jobs['trash listing (read-only)']!, (p) => (c0(p).securityContext!.capabilities!.add = ['DAC_OVERRIDE'])),
        'capabilities: a list, read, search or export',
      ],
      ['a trash listing mounting the world read-write', variant(jobs['trash listing (read-only)']!, (p) => (p.volumes![0]!.persistentVolumeClaim!.readOnly = false)), 'read-only world:'],
      ['a read Job mounting the world read-write', variant(read, (p) => (p.volumes![0]!.persistentVolumeClaim!.readOnly = false)), 'read-only world:'],
      ['a search Job mounting the world read-write', variant(jobs['one-shot search']!, (p) => (p.volumes![0]!.persistentVolumeClaim!.readOnly = false)), 'read-only world:'],
      ['an export Job mounting the world read-write', variant(folderExport, (p) => (p.volumes![0]!.persistentVolumeClaim!.readOnly = false)), 'read-only world:'],
      ['a sidecar', variant(write, (p) => p.containers.push({ ...structuredClone(c0(p)), name: 'side' })), 'containers:'],
      ['an init container', variant(write, (p) => (p.initContainers = [{ ...structuredClone(c0(p)), name: 'init' }])), 'containers:'],
      ['no labels of ours', variant(write, (_p, j) => (j.metadata!.labels = j.spec!.template.metadata!.labels = { app: 'x' })), 'labels:'],
      [
        'a managed-by that is not ours (on the Job and its Pods)',
        variant(write, (_p, j) => (j.metadata!.labels!['app.kubernetes.io/managed-by'] = j.spec!.template.metadata!.labels!['app.kubernetes.io/managed-by'] = 'felis-backup')),
        'labels:',
      ],
      [
        'a read Job calling itself an edit session to mount the world read-write',
        variant(read, (p, j) => {
          j.metadata!.labels!['felis.lolicon.best/files-edit'] = j.spec!.template.metadata!.labels!['felis.lolicon.best/files-edit'] = 'true';
          p.volumes![0]!.persistentVolumeClaim!.readOnly = false;
        }),
        'edit session:',
      ],
      [
        'an edit session running another program mode',
        variant(jobs['edit session (read-write, FOWNER, holds nothing)']!, (p) => (c0(p).args = ['--op', 'delete', '--path', 'world', '--worlds-root', '/data'])),
        'edit session:',
      ],
      [
        'an edit session of a mode that is not read',
        variant(
          jobs['edit session (read-write, FOWNER, holds nothing)']!,
          (_p, j) => (j.metadata!.labels!['felis.lolicon.best/files-mode'] = j.spec!.template.metadata!.labels!['felis.lolicon.best/files-mode'] = 'write'),
        ),
        'edit session:',
      ],
      [
        'an edit session with SYS_ADMIN',
        variant(jobs['edit session (read-write, FOWNER, holds nothing)']!, (p) => c0(p).securityContext!.capabilities!.add!.push('SYS_ADMIN')),
        'capabilities: add only',
      ],
      [
        'an edit label on the Job but not its Pods (out of the edit NetworkPolicy)',
        variant(jobs['edit session (read-write, FOWNER, holds nothing)']!, (_p, j) => delete j.spec!.template.metadata!.labels!['felis.lolicon.best/files-edit']),
        'pod labels:',
      ],
      [
        'a read Job calling itself an upload session to mount the world read-write',
        variant(read, (p, j) => {
          j.metadata!.labels!['felis.lolicon.best/upload-session'] = 'c'.repeat(32);
          p.volumes![0]!.persistentVolumeClaim!.readOnly = false;
        }),
        'upload session:',
      ],
      [
        'an upload session receiver running another program mode',
        variant(jobs['upload session receiver']!, (p) => (c0(p).args = ['--op', 'delete', '--path', 'world', '--worlds-root', '/data'])),
        'upload session:',
      ],
      [
        'an upload session receiver for another session than its label',
        variant(jobs['upload session receiver']!, (p) => (c0(p).env!.find((e) => e.name === 'FELIS_UPLOAD_SESSION')!.value = 'd'.repeat(32))),
        'upload session:',
      ],
      [
        'an upload session receiver landing single uploads (no session in its env)',
        variant(jobs['upload session receiver']!, (p) => (c0(p).env = c0(p).env!.filter((e) => e.name !== 'FELIS_UPLOAD_SESSION'))),
        'upload session:',
      ],
      ['an upload session receiver told to land one upload', variant(jobs['upload session receiver']!, (p) => c0(p).env!.push({ name: 'FELIS_RECEIVE_ONCE', value: 'true' })), 'upload session:'],
      ['Pod labels that escape the NetworkPolicies', variant(write, (_p, j) => (j.spec!.template.metadata!.labels = { 'felis.lolicon.best/server': 'survival' })), 'pod labels:'],
      // A pull is labelled mode read yet writes: its label must mean the pull program and nothing else.
      [
        'a read Job calling itself a pull to mount the world read-write',
        variant(read, (p, j) => {
          j.metadata!.labels!['felis.lolicon.best/files-pull'] = j.spec!.template.metadata!.labels!['felis.lolicon.best/files-pull'] = 'true';
          p.volumes![0]!.persistentVolumeClaim!.readOnly = false;
        }),
        'pull:',
      ],
      [
        'a pull Job that runs another op after its --op pull (the last flag wins)',
        variant(jobs['background pull (mode read, read-write, its cancel port, the operator env)']!, (p) => c0(p).args!.push('--op', 'delete')),
        'pull:',
      ],
      [
        'a pull Job of a mode that is not read',
        variant(
          jobs['background pull (mode read, read-write, its cancel port, the operator env)']!,
          (_p, j) => (j.metadata!.labels!['felis.lolicon.best/files-mode'] = j.spec!.template.metadata!.labels!['felis.lolicon.best/files-mode'] = 'write'),
        ),
        'pull:',
      ],
      [
        'a write whose Pods alone carry the pull label (let out by the pull NetworkPolicy)',
        variant(write, (_p, j) => (j.spec!.template.metadata!.labels!['felis.lolicon.best/files-pull'] = 'true')),
        'pull:',
      ],
      [
        'a pull label on the Job but not its Pods',
        variant(jobs['background pull (mode read, read-write, its cancel port, the operator env)']!, (_p, j) => delete j.spec!.template.metadata!.labels!['felis.lolicon.best/files-pull']),
        'pod labels:',
      ],
    ];
    const reasons = new Set<string>();
    for (const [what, job, prefix] of cases) {
      const r = admit(job);
      assert.equal(r.matched, true, what);
      assert.deepEqual(r.refused, [messageOf(prefix)], what);
      reasons.add(prefix);
    }
    assert.ok(reasons.size >= 12, `${reasons.size} distinct reasons`);
  });

  test('a Job with no containers at all is refused (the rules that read its container error, and an error refuses)', () => {
    const r = admit(variant(everyRenderedJob()['one-shot write']!, (p) => (p.containers = [])));
    assert.ok(r.refused.includes(messageOf('containers:')));
    assert.ok(r.refused.includes(messageOf('image:')));
  });

  test('without its parameter nothing is admitted (a Job checked against no settings errors)', () => {
    const object = celInput(JSON.parse(JSON.stringify(everyRenderedJob()['one-shot read'])));
    const imageRule = policy.spec.validations.find((v: Obj) => v.message.startsWith('image:')).expression;
    assert.equal(evaluate(imageRule, { object, variables: { c: object.spec.template.spec.containers[0] }, params: celInput({ data: {} }) }), ERRORED);
  });
});

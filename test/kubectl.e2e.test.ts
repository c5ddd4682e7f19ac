/**
 * kubectl against the cluster: one script of kubectl commands (Debian's kubectl v1.20, the
 * client of the cluster tier's control plane; test/support/kubectl.ts fetches it) run as a
 * subprocess — `get` as tables and `-o json`, `apply -f`, `annotate`, `patch --type=merge`, `logs`,
 * `wait --for=condition=complete`, `get -w`, `delete`, `auth can-i` — with an admin kubeconfig and
 * the functions' identity.
 *
 * `npm test` runs it against the embedded cluster (HTTPS, its CA in the kubeconfig), and every
 * answer is checked against what kubectl prints for a real v1.20 apiserver (the expectations
 * below). `npm run test:cluster` runs the same script against the real apiserver, checks the same
 * expectations, then runs it again against a fresh embedded cluster and compares the two
 * transcripts step by step (after normalising names, ages, uids and addresses), so a difference
 * between the emulation and the real server fails there even where no expectation names it.
 *
 * Where v1.20 and the emulation's current Kubernetes forms differ on purpose (cluster/README.md:
 * the `batch.kubernetes.io/` label prefix, `SuccessCriteriaMet`), the normalisation maps both to
 * one form.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ClusterHarness } from '../cluster/harness.ts';
import { startCluster } from '../cluster/index.ts';
import { tokenKubeconfigYaml } from '../cluster/kubeconfig.ts';
import { debianKubectl, type KubectlResult, runKubectl, runKubectlUntil } from './support/kubectl.ts';
import { createServer, STOPPED } from './support/servers.ts';
import { REAL, ROOT, type Stack, startStack } from './support/stack.ts';

type Any = any;

const JOB = `apiVersion: batch/v1
kind: Job
metadata:
  name: kubectl-hello
  labels:
    app: kubectl-test
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: hello
        image: busybox
        command: ["sh", "-c", "echo hello from the job; sleep 1; echo bye"]
`;

/** One step's normalised answer: what is compared between the tiers and with the expectations. */
interface Answer {
  step: string;
  code: number;
  out: unknown;
  err: string;
}

/** Table output: cells split on column gaps, ages and durations as `<t>`, random names and uids fixed. */
export function normTable(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) =>
      l
        .trim()
        .split(/\s{2,}/)
        .map((c) =>
          c
            .replace(/^(<invalid>|\d+(s|m|h|d|y)(\d+(s|m|h|d))?)$/, '<t>')
            .replace(/^\d{1,3}(\.\d{1,3}){3}$/, '<ip>')
            .replace(/(batch\.kubernetes\.io\/)?controller-uid=[0-9a-f-]{36}/, 'controller-uid=<uid>')
            .replace(/^(kubectl-hello|pod\/kubectl-hello)-[a-z0-9]{5}$/, '$1-xxxxx'),
        )
        .join(' | '),
    );
}

/** kubectl's stderr without its request-level chatter; pod names fixed. */
function normErr(text: string): string {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.replace(/kubectl-hello-[a-z0-9]{5}/g, 'kubectl-hello-xxxxx'))
    .join('\n');
}

const pick = (o: Any, keys: string[]) => Object.fromEntries(keys.filter((k) => o?.[k] !== undefined).map((k) => [k, o[k]]));

/** `get job -o json`: the fields kubectl users read, with v1.20's forms. */
function jobView(j: Any): unknown {
  const conditions = ((j.status?.conditions ?? []) as Any[]).filter((c) => c.type === 'Complete' || c.type === 'Failed').map((c) => ({ type: c.type, status: c.status }));
  return {
    kind: j.kind,
    apiVersion: j.apiVersion,
    name: j.metadata?.name,
    namespace: j.metadata?.namespace,
    labels: Object.fromEntries(Object.entries((j.metadata?.labels ?? {}) as Record<string, string>).filter(([k]) => !k.startsWith('batch.kubernetes.io/') && k !== 'controller-uid')),
    annotations: Object.keys(j.metadata?.annotations ?? {}).sort(),
    spec: {
      ...pick(j.spec, ['backoffLimit', 'completions', 'parallelism']),
      template: {
        containers: j.spec?.template?.spec?.containers?.map((c: Any) => pick(c, ['name', 'image', 'command', 'imagePullPolicy', 'terminationMessagePolicy'])),
        restartPolicy: j.spec?.template?.spec?.restartPolicy,
      },
    },
    status: { ...pick(j.status, ['succeeded', 'failed', 'active']), conditions, hasStart: !!j.status?.startTime, hasCompletion: !!j.status?.completionTime },
  };
}

function podView(p: Any): unknown {
  const cs = ((p.status?.containerStatuses ?? []) as Any[]).map((c) => ({ name: c.name, ready: c.ready, restartCount: c.restartCount, terminated: pick(c.state?.terminated, ['exitCode', 'reason']) }));
  return {
    kind: p.kind,
    apiVersion: p.apiVersion,
    jobName: p.metadata?.labels?.['job-name'],
    owner: (p.metadata?.ownerReferences ?? []).map((o: Any) => pick(o, ['apiVersion', 'kind', 'name', 'controller', 'blockOwnerDeletion'])),
    phase: p.status?.phase,
    nodeName: p.spec?.nodeName,
    containerStatuses: cs,
  };
}

function serverView(m: Any): unknown {
  const note = m.metadata?.annotations?.['felis.example/note'];
  return { kind: m.kind, apiVersion: m.apiVersion, name: m.metadata?.name, namespace: m.metadata?.namespace, spec: m.spec, ...(note === undefined ? {} : { note }) };
}

interface Target {
  admin: string;
  fn: string;
  env: NodeJS.ProcessEnv;
}

async function runScript(kubectl: string, t: Target): Promise<Answer[]> {
  const answers: Answer[] = [];
  const as = (who: 'admin' | 'fn', args: string[], input?: string) => runKubectl(kubectl, ['--kubeconfig', who === 'admin' ? t.admin : t.fn, ...args], { env: t.env, input, timeoutMs: 90_000 });
  const record = (step: string, r: KubectlResult, out: (s: string) => unknown = normTable) => {
    answers.push({ step, code: r.code, out: out(r.stdout), err: normErr(r.stderr) });
  };
  const json = (f: (o: Any) => unknown) => (s: string) => f(JSON.parse(s));
  const list = (f: (o: Any) => unknown) => json((l) => ({ kind: l.kind, apiVersion: l.apiVersion, items: (l.items as Any[]).map(f) }));

  record('get jobs,pods,minecraftservers', await as('admin', ['get', 'jobs,pods,minecraftservers']));
  record('get minecraftservers -o json', await as('admin', ['get', 'minecraftservers', '-o', 'json']), list(serverView));
  record('auth can-i create jobs (admin)', await as('admin', ['auth', 'can-i', 'create', 'jobs']));
  record('auth can-i create jobs (function)', await as('fn', ['auth', 'can-i', 'create', 'jobs']));
  record('auth can-i watch jobs (function)', await as('fn', ['auth', 'can-i', 'watch', 'jobs']));
  record('auth can-i patch minecraftservers (function)', await as('fn', ['auth', 'can-i', 'patch', 'minecraftservers']));
  record('auth can-i delete minecraftservers (function)', await as('fn', ['auth', 'can-i', 'delete', 'minecraftservers.felis.lolicon.best']));
  record('get pods/log subresource can-i (function)', await as('fn', ['auth', 'can-i', 'get', 'pods', '--subresource=log']));

  // The watch runs from before the Job exists until it sees the Job complete.
  const watch = runKubectlUntil(kubectl, ['--kubeconfig', t.admin, 'get', 'jobs', '-l', 'app=kubectl-test', '-w'], (out) => /kubectl-hello\s+1\/1/.test(out), { env: t.env, timeoutMs: 90_000 });
  // With kubectl's client-side validation (the server's /openapi/v2, in protobuf).
  record('apply -f job.yaml', await as('admin', ['apply', '-f', '-'], JOB));
  record('wait --for=condition=complete', await as('admin', ['wait', '--for=condition=complete', 'job/kubectl-hello', '--timeout=60s']));
  const w = await watch.result;
  const lines = normTable(w.stdout);
  answers.push({ step: 'get jobs -w (until 1/1)', code: w.sawEnd ? 0 : w.code, out: { header: lines[0], last: lines[lines.length - 1], sawEnd: w.sawEnd }, err: normErr(w.stderr) });

  record('logs job/kubectl-hello', await as('admin', ['logs', 'job/kubectl-hello']), (s) => s);
  record('get jobs', await as('admin', ['get', 'jobs']));
  record('get jobs -o wide', await as('admin', ['get', 'jobs', '-o', 'wide']));
  record('get pods', await as('admin', ['get', 'pods', '-l', 'job-name=kubectl-hello']));
  record('get pods -o wide', await as('admin', ['get', 'pods', '-l', 'job-name=kubectl-hello', '-o', 'wide']));
  record('get job -o json', await as('admin', ['get', 'job', 'kubectl-hello', '-o', 'json']), json(jobView));
  record('get pods -o json', await as('admin', ['get', 'pods', '-l', 'job-name=kubectl-hello', '-o', 'json']), list(podView));
  record('apply -f job.yaml again (unchanged)', await as('admin', ['apply', '-f', '-'], JOB));
  const bad = JOB.replace('name: kubectl-hello', 'name: kubectl-bad');
  record('apply -f, an unknown field (validation)', await as('admin', ['apply', '-f', '-'], bad.replace('command:', 'commnd:')));
  record('apply -f, a mistyped field (validation)', await as('admin', ['apply', '-f', '-'], bad.replace('backoffLimit: 0', 'backoffLimit: none')));
  record('apply -f, a missing required field (validation)', await as('admin', ['apply', '-f', '-'], bad.replace('      - name: hello\n        image', '      - image')));
  record('explain job.spec.backoffLimit', await as('admin', ['explain', 'job.spec.backoffLimit']), (t) => t.split('\n').slice(0, 4).join('\n'));

  record('annotate minecraftserver', await as('admin', ['annotate', 'minecraftserver', 'survival', 'felis.example/note=hello']));
  record('patch --type=merge minecraftserver', await as('admin', ['patch', 'mc', 'survival', '--type=merge', '-p', '{"spec":{"displayName":"Kubectl"}}']));
  record('get mc -o jsonpath', await as('admin', ['get', 'mc', 'survival', '-o', 'jsonpath={.metadata.annotations.felis\\.example/note} {.spec.displayName}']), (s) => s);
  record('get mc survival -o json', await as('admin', ['get', 'mc', 'survival', '-o', 'json']), json(serverView));
  record('get minecraftservers', await as('admin', ['get', 'minecraftservers']));
  record('patch --type=merge, invalid enum', await as('admin', ['patch', 'mc', 'survival', '--type=merge', '-p', '{"spec":{"desiredState":"Sideways"}}']));

  record('get jobs -w (function: may list, may not watch)', await as('fn', ['get', 'jobs', '-w', '--request-timeout=20s']));
  record('get job nope', await as('admin', ['get', 'job', 'nope']));
  record('delete job', await as('admin', ['delete', 'job', 'kubectl-hello']));
  record('get jobs (none left)', await as('admin', ['get', 'jobs']));
  return answers;
}

/** What kubectl v1.20 prints against a real v1.20 apiserver for each step (normalised). */
const EXPECTED: Record<string, Partial<Answer>> = {
  'get jobs,pods,minecraftservers': { code: 0, out: ['NAME | AGE', 'minecraftserver.felis.lolicon.best/survival | <t>'], err: '' },
  'get minecraftservers -o json': {
    code: 0,
    out: {
      kind: 'List',
      apiVersion: 'v1',
      items: [{ kind: 'MinecraftServer', apiVersion: 'felis.lolicon.best/v1alpha1', name: 'survival', namespace: 'minecraft', spec: { desiredState: 'Stopped' } }],
    },
  },
  'auth can-i create jobs (admin)': { code: 0, out: ['yes'] },
  'auth can-i create jobs (function)': { code: 0, out: ['yes'] },
  'auth can-i watch jobs (function)': { code: 1, out: ['no'] },
  'auth can-i patch minecraftservers (function)': { code: 0, out: ['yes'] },
  'auth can-i delete minecraftservers (function)': { code: 1, out: ['no'] },
  'get pods/log subresource can-i (function)': { code: 0, out: ['yes'] },
  'apply -f job.yaml': { code: 0, out: ['job.batch/kubectl-hello created'], err: '' },
  'wait --for=condition=complete': { code: 0, out: ['job.batch/kubectl-hello condition met'], err: '' },
  'get jobs -w (until 1/1)': { code: 0, out: { header: 'NAME | COMPLETIONS | DURATION | AGE', last: 'kubectl-hello | 1/1 | <t> | <t>', sawEnd: true } },
  'logs job/kubectl-hello': { code: 0, out: 'hello from the job\nbye\n' },
  'get jobs': { code: 0, out: ['NAME | COMPLETIONS | DURATION | AGE', 'kubectl-hello | 1/1 | <t> | <t>'], err: '' },
  'get jobs -o wide': { code: 0, out: ['NAME | COMPLETIONS | DURATION | AGE | CONTAINERS | IMAGES | SELECTOR', 'kubectl-hello | 1/1 | <t> | <t> | hello | busybox | controller-uid=<uid>'] },
  'get pods': { code: 0, out: ['NAME | READY | STATUS | RESTARTS | AGE', 'kubectl-hello-xxxxx | 0/1 | Completed | 0 | <t>'] },
  'get pods -o wide': {
    code: 0,
    out: ['NAME | READY | STATUS | RESTARTS | AGE | IP | NODE | NOMINATED NODE | READINESS GATES', 'kubectl-hello-xxxxx | 0/1 | Completed | 0 | <t> | <ip> | local | <none> | <none>'],
  },
  'get job -o json': {
    code: 0,
    out: {
      kind: 'Job',
      apiVersion: 'batch/v1',
      name: 'kubectl-hello',
      namespace: 'minecraft',
      labels: { app: 'kubectl-test' },
      annotations: ['kubectl.kubernetes.io/last-applied-configuration'],
      spec: {
        backoffLimit: 0,
        completions: 1,
        parallelism: 1,
        template: {
          containers: [{ name: 'hello', image: 'busybox', command: ['sh', '-c', 'echo hello from the job; sleep 1; echo bye'], imagePullPolicy: 'Always', terminationMessagePolicy: 'File' }],
          restartPolicy: 'Never',
        },
      },
      status: { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }], hasStart: true, hasCompletion: true },
    },
  },
  'get pods -o json': {
    code: 0,
    out: {
      kind: 'List',
      apiVersion: 'v1',
      items: [
        {
          kind: 'Pod',
          apiVersion: 'v1',
          jobName: 'kubectl-hello',
          owner: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'kubectl-hello', controller: true, blockOwnerDeletion: true }],
          phase: 'Succeeded',
          nodeName: 'local',
          containerStatuses: [{ name: 'hello', ready: false, restartCount: 0, terminated: { exitCode: 0, reason: 'Completed' } }],
        },
      ],
    },
  },
  'apply -f job.yaml again (unchanged)': { code: 0, out: ['job.batch/kubectl-hello unchanged'], err: '' },
  'apply -f, an unknown field (validation)': {
    code: 1,
    out: [],
    err: 'error: error validating "STDIN": error validating data: ValidationError(Job.spec.template.spec.containers[0]): unknown field "commnd" in io.k8s.api.core.v1.Container; if you choose to ignore these errors, turn validation off with --validate=false',
  },
  'apply -f, a mistyped field (validation)': {
    code: 1,
    out: [],
    err: 'error: error validating "STDIN": error validating data: ValidationError(Job.spec.backoffLimit): invalid type for io.k8s.api.batch.v1.JobSpec.backoffLimit: got "string", expected "integer"; if you choose to ignore these errors, turn validation off with --validate=false',
  },
  'apply -f, a missing required field (validation)': {
    code: 1,
    out: [],
    err: 'error: error validating "STDIN": error validating data: ValidationError(Job.spec.template.spec.containers[0]): missing required field "name" in io.k8s.api.core.v1.Container; if you choose to ignore these errors, turn validation off with --validate=false',
  },
  'explain job.spec.backoffLimit': { code: 0, out: 'KIND:     Job\nVERSION:  batch/v1\n\nFIELD:    backoffLimit <integer>' },
  'annotate minecraftserver': { code: 0, out: ['minecraftserver.felis.lolicon.best/survival annotated'], err: '' },
  'patch --type=merge minecraftserver': { code: 0, out: ['minecraftserver.felis.lolicon.best/survival patched'], err: '' },
  'get mc -o jsonpath': { code: 0, out: 'hello Kubectl' },
  'get mc survival -o json': {
    code: 0,
    out: { kind: 'MinecraftServer', apiVersion: 'felis.lolicon.best/v1alpha1', name: 'survival', namespace: 'minecraft', spec: { desiredState: 'Stopped', displayName: 'Kubectl' }, note: 'hello' },
  },
  'get minecraftservers': { code: 0, out: ['NAME | AGE', 'survival | <t>'] },
  'patch --type=merge, invalid enum': {
    code: 1,
    out: [],
    err: 'The MinecraftServer "survival" is invalid: spec.desiredState: Unsupported value: "Sideways": supported values: "", "Running", "Stopped"',
  },
  'get jobs -w (function: may list, may not watch)': {
    code: 1,
    out: ['NAME | COMPLETIONS | DURATION | AGE', 'kubectl-hello | 1/1 | <t> | <t>'],
    err: 'Error from server (Forbidden): unknown (get jobs.batch)',
  },
  'get job nope': { code: 1, out: [], err: 'Error from server (NotFound): jobs.batch "nope" not found' },
  'delete job': { code: 0, out: ['job.batch "kubectl-hello" deleted'], err: '' },
  'get jobs (none left)': { code: 0, out: [], err: 'No resources found in minecraft namespace.' },
};

/** Every step against its expectation; all differences are reported together. */
function checkExpected(answers: Answer[], tier: string): void {
  const wrong: string[] = [];
  assert.deepEqual(
    answers.map((a) => a.step).filter((st) => !EXPECTED[st]),
    [],
    'every step has an expectation',
  );
  for (const a of answers) {
    const want = EXPECTED[a.step]!;
    const got: Partial<Answer> = {};
    for (const k of Object.keys(want) as (keyof Answer)[]) (got as Any)[k] = a[k];
    try {
      assert.deepEqual(got, want);
    } catch {
      wrong.push(`kubectl ${a.step}:\n  got  ${JSON.stringify(got)}\n  want ${JSON.stringify(want)}`);
    }
  }
  assert.equal(wrong.length, 0, `${tier}: ${wrong.length} answers differ from v1.20's:\n${wrong.join('\n')}`);
}

describe('kubectl v1.20 against the cluster', () => {
  let kubectl: string;
  let s: Stack;
  let dir: string;
  const written = (name: string, yaml: string) => {
    const f = join(dir, name);
    writeFileSync(f, yaml, { mode: 0o600 });
    return f;
  };
  const targetOf = (c: ClusterHarness, prefix: string): Target => {
    const real = (c as Any).apiserverUrl as string | undefined;
    // The real tier: straight to the apiserver (HTTPS, its own self-signed certificate), not
    // through the counting proxy, which is plain HTTP.
    const yaml = (token: string) => (real ? tokenKubeconfigYaml(real, token, 'cluster-tier') : c.kubeconfigYaml(token));
    const home = mkdtempSync(join(dir, `${prefix}-home-`));
    return {
      admin: written(`${prefix}-admin.kubeconfig`, yaml(c.adminToken)),
      fn: written(`${prefix}-fn.kubeconfig`, yaml(c.tokenFor('minecraft', 'felis-world'))),
      env: { PATH: process.env.PATH, HOME: home, KUBECACHEDIR: join(home, 'cache') },
    };
  };

  before(async () => {
    kubectl = debianKubectl();
    const v = await runKubectl(kubectl, ['version', '--client', '--short'], { env: { PATH: process.env.PATH } });
    assert.match(v.stdout, /Client Version: v1\.20\./, `${kubectl} is not kubectl v1.20`);
    dir = mkdtempSync(join(tmpdir(), 'felis-kubectl-'));
    s = await startStack();
  });
  after(async () => {
    await s?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test(`the script's answers are v1.20's (${REAL ? 'real apiserver' : 'embedded cluster'})`, async () => {
    const answers = await runScript(kubectl, targetOf(s.cluster, 'main'));
    if (process.env.FELIS_KUBECTL_TRANSCRIPT) writeFileSync(process.env.FELIS_KUBECTL_TRANSCRIPT, JSON.stringify(answers, null, 1));
    checkExpected(answers, REAL ? 'real' : 'embedded');
    if (!REAL) return;
    // The real tier: the same script against a fresh embedded cluster, answer by answer.
    const emb = await startCluster({ dataDir: mkdtempSync(join(dir, 'emb-')), rbacManifest: join(ROOT, 'knative/rbac.yaml') });
    try {
      await createServer(emb, 'survival', STOPPED);
      const embedded = await runScript(kubectl, targetOf(emb, 'emb'));
      for (let i = 0; i < answers.length; i++) assert.deepEqual(embedded[i], answers[i], `embedded vs real: kubectl ${answers[i]!.step}`);
    } finally {
      await emb.close();
    }
  });
});

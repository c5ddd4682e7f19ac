import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiException, type V1Job, type V1Pod } from '@kubernetes/client-node';
import type { MinecraftServer, ServerApi } from '../kube/servers.ts';
import { TemplateRestorer } from './restorer.ts';
import { type ChainFacts, decideAfterRestore, decideChain, type RestoreRequest, type Restorer, restoreJobName, Settler } from './settle.ts';

const PENDING = 'felis.lolicon.best/then-restore';
const REASON = 'felis.lolicon.best/then-restore-reason';
const DONE = [{ type: 'Complete', status: 'True' }];
const STOPPED: MinecraftServer = { metadata: { name: 'survival' }, spec: { desiredState: 'Stopped' }, status: { phase: 'Stopped', ready: false } };

/** Jobs and servers in memory, with resourceVersion preconditions on patches as the API server has. */
class FakeApi implements ServerApi {
  jobs: V1Job[] = [];
  servers = new Map<string, MinecraftServer>();
  rv = 1;
  patches = 0;
  /** Called before each patch is applied: a test can write the Job in between, as another pass would. */
  beforePatch?: (name: string) => void;
  failGetServer?: Error;

  chain(name: string, server: string, conditions = DONE): V1Job {
    const j: V1Job = {
      metadata: {
        name,
        uid: `uid-${name}`,
        resourceVersion: String(this.rv++),
        labels: { 'app.kubernetes.io/managed-by': 'felis-backup', 'felis.lolicon.best/server': server, [PENDING]: 'pending' },
        annotations: { 'felis.lolicon.best/restore-ref': `s3://b/${server}/1`, 'felis.lolicon.best/restore-backup-id': '1' },
      },
      status: { conditions },
    };
    this.jobs.push(j);
    return j;
  }
  async getServer(_ns: string, name: string) {
    if (this.failGetServer) throw this.failGetServer;
    return structuredClone(this.servers.get(name));
  }
  async listServers() {
    return [...this.servers.values()];
  }
  async patchServer(): Promise<MinecraftServer> {
    throw new Error('not used');
  }
  async removeAnnotationIf(): Promise<boolean> {
    throw new Error('not used');
  }
  async listJobs(_ns: string, selector: string) {
    const want = selector.split(',').map((kv) => kv.split('='));
    return structuredClone(this.jobs.filter((j) => want.every(([k, v]) => j.metadata?.labels?.[k!] === v)));
  }
  async listPods(): Promise<V1Pod[]> {
    return [];
  }
  async getClaim() {
    return { accessModes: ['ReadWriteOnce'] };
  }
  async patchJob(_ns: string, name: string, patch: { metadata: { resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string> } }) {
    this.beforePatch?.(name);
    const j = this.jobs.find((x) => x.metadata?.name === name);
    if (!j) throw new ApiException(404, 'NotFound', JSON.stringify({ reason: 'NotFound' }), {});
    const m = patch.metadata;
    if (m.resourceVersion && m.resourceVersion !== j.metadata!.resourceVersion) {
      throw new ApiException(409, 'Conflict', JSON.stringify({ reason: 'Conflict', message: 'the object has been modified' }), {});
    }
    Object.assign(j.metadata!.labels!, m.labels);
    j.metadata!.annotations = { ...j.metadata!.annotations, ...m.annotations };
    j.metadata!.resourceVersion = String(this.rv++);
    this.patches++;
  }
  async createJob(_ns: string, job: V1Job) {
    if (this.jobs.some((j) => j.metadata?.name === job.metadata?.name)) {
      throw new ApiException(409, 'AlreadyExists', JSON.stringify({ reason: 'AlreadyExists' }), {});
    }
    const created = { ...structuredClone(job), metadata: { ...job.metadata, uid: `uid-${job.metadata?.name}`, resourceVersion: String(this.rv++) } };
    this.jobs.push(created);
    return created;
  }
  label(name: string) {
    const j = this.jobs.find((x) => x.metadata?.name === name)!;
    return { state: j.metadata!.labels![PENDING], reason: j.metadata!.annotations?.[REASON] };
  }
  restoreJobs() {
    return this.jobs.filter((j) => j.metadata?.labels?.['app.kubernetes.io/managed-by'] === 'felis-restore');
  }
}

const TEMPLATE: V1Job = { metadata: {}, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'restore', image: 'r' }] } } } };
const setup = () => {
  const api = new FakeApi();
  api.servers.set('survival', STOPPED);
  return { api, settler: new Settler(api, 'minecraft', new TemplateRestorer(api, 'minecraft', TEMPLATE)) };
};

const facts = (f: Partial<ChainFacts> = {}): ChainFacts => ({ snapshot: 'succeeded', restoreJobExists: false, restorerConfigured: true, server: STOPPED, ...f });

test('the settle decision: a running snapshot is left; an existing restore Job settles the chain started before any other rule', () => {
  assert.deepEqual(decideChain(facts({ snapshot: 'running' })), { action: 'leave' });
  assert.deepEqual(decideChain(facts()), { action: 'restore' });
  for (const f of [
    facts({ restoreJobExists: true, server: undefined }),
    facts({ restoreJobExists: true, restorerConfigured: false }),
    facts({ restoreJobExists: true, server: { ...STOPPED, status: { ready: true } } }),
  ]) {
    assert.deepEqual(decideChain(f), { action: 'settle', state: 'started' });
  }
  assert.deepEqual(decideChain(facts({ snapshot: 'failed' })), { action: 'settle', state: 'abandoned', reason: 'snapshot_failed' });
  assert.deepEqual(decideChain(facts({ restorerConfigured: false })), { action: 'settle', state: 'abandoned', reason: 'not_configured' });
  assert.deepEqual(decideChain(facts({ server: undefined })), { action: 'settle', state: 'abandoned', reason: 'server_gone' });
  assert.deepEqual(decideChain(facts({ server: { ...STOPPED, spec: { desiredState: 'Running' } } })), { action: 'settle', state: 'abandoned', reason: 'server_started' });
  assert.deepEqual(decideAfterRestore('busy'), { action: 'settle', state: 'abandoned', reason: 'restore_busy' });
  assert.deepEqual(decideAfterRestore('gone'), { action: 'settle', state: 'abandoned', reason: 'server_gone' });
  assert.deepEqual(decideAfterRestore('started'), { action: 'settle', state: 'started' });
});

test('the restore Job name is derived from the backup uid and is always a DNS label of at most 63 characters', () => {
  const a = restoreJobName('survival', 'uid-1');
  assert.match(a, /^felis-restore-survival-[0-9a-f]{10}$/);
  assert.equal(restoreJobName('survival', 'uid-1'), a);
  assert.notEqual(restoreJobName('survival', 'uid-2'), a);
  const long = restoreJobName('s'.repeat(60), 'uid-1');
  assert.match(long, /^felis-restore-[0-9a-f]{20}$/);
  assert.match(restoreJobName('Bad_Name', 'uid-1'), /^felis-restore-[0-9a-f]{20}$/);
  assert.ok(restoreJobName('a'.repeat(32), 'u').length <= 63);
});

test('a finished snapshot of a stopped server gets its restore Job under the derived name and is settled started', async () => {
  const { api, settler } = setup();
  api.chain('b1', 'survival');
  const out = await settler.settleOnce();
  assert.deepEqual(out, [{ job: 'b1', server: 'survival', state: 'started' }]);
  assert.deepEqual(
    api.restoreJobs().map((j) => j.metadata!.name),
    [restoreJobName('survival', 'uid-b1')],
  );
  assert.equal(api.label('b1').state, 'started');
});

test('server_gone: the server was deleted after its snapshot', async () => {
  const { api, settler } = setup();
  api.chain('b1', 'gone-server');
  assert.deepEqual(await settler.settleOnce(), [{ job: 'b1', server: 'gone-server', state: 'abandoned', reason: 'server_gone' }]);
  assert.deepEqual(api.label('b1'), { state: 'abandoned', reason: 'server_gone' });
  assert.equal(api.restoreJobs().length, 0);
});

test('restore_busy: another restore of the world still runs, so no second one is started', async () => {
  const { api, settler } = setup();
  await api.createJob('minecraft', { metadata: { name: 'felis-restore-by-hand', labels: { 'app.kubernetes.io/managed-by': 'felis-restore', 'felis.lolicon.best/server': 'survival' } } });
  api.chain('b1', 'survival');
  assert.deepEqual(await settler.settleOnce(), [{ job: 'b1', server: 'survival', state: 'abandoned', reason: 'restore_busy' }]);
  assert.equal(api.restoreJobs().length, 1);
  assert.deepEqual(api.label('b1'), { state: 'abandoned', reason: 'restore_busy' });
});

test('not_configured: without a restorer no restore Job is created', async () => {
  const api = new FakeApi();
  api.servers.set('survival', STOPPED);
  api.chain('b1', 'survival');
  const out = await new Settler(api, 'minecraft').settleOnce();
  assert.deepEqual(out, [{ job: 'b1', server: 'survival', state: 'abandoned', reason: 'not_configured' }]);
  assert.equal(api.restoreJobs().length, 0);
});

test('an error while deciding leaves the chain pending for the next pass, and the next pass settles it', async () => {
  const { api, settler } = setup();
  api.chain('b1', 'survival');
  api.failGetServer = new ApiException(500, 'boom', JSON.stringify({ reason: 'InternalError', message: 'etcd timeout' }), {});
  const out = await settler.settleOnce();
  assert.equal(out.length, 1);
  assert.equal(out[0]!.state, 'pending');
  assert.match(out[0]!.error!, /500 InternalError: etcd timeout/);
  assert.equal(api.label('b1').state, 'pending');
  assert.equal(api.patches, 0);
  api.failGetServer = undefined;
  assert.equal((await settler.settleOnce())[0]!.state, 'started');
});

test('a restorer error leaves the chain pending', async () => {
  const api = new FakeApi();
  api.servers.set('survival', STOPPED);
  api.chain('b1', 'survival');
  const failing: Restorer = { restore: async () => Promise.reject(new Error('template broken')) };
  const out = await new Settler(api, 'minecraft', failing).settleOnce();
  assert.deepEqual(out, [{ job: 'b1', server: 'survival', state: 'pending', error: 'template broken' }]);
  assert.equal(api.label('b1').state, 'pending');
});

test('a chain whose restore Job exists but whose label was never written is labelled started, not restore_busy', async () => {
  const { api, settler } = setup();
  api.chain('b1', 'survival');
  await api.createJob('minecraft', { metadata: { name: restoreJobName('survival', 'uid-b1'), labels: { 'app.kubernetes.io/managed-by': 'felis-restore', 'felis.lolicon.best/server': 'survival' } } });
  // Even with the server started since: the restore already runs, so that is the chain's outcome.
  api.servers.set('survival', { ...STOPPED, spec: { desiredState: 'Running' } });
  assert.deepEqual(await settler.settleOnce(), [{ job: 'b1', server: 'survival', state: 'started' }]);
  assert.equal(api.restoreJobs().length, 1);
});

test('a label patch on a stale resourceVersion is re-read and decided again; a chain settled meanwhile is reported as it is', async () => {
  const { api, settler } = setup();
  api.chain('b1', 'survival');
  let raced = false;
  api.beforePatch = (name) => {
    if (raced) return;
    raced = true;
    // Another pass settles the chain between our read and our patch.
    const j = api.jobs.find((x) => x.metadata?.name === name)!;
    j.metadata!.labels![PENDING] = 'started';
    j.metadata!.resourceVersion = String(api.rv++);
  };
  assert.deepEqual(await settler.settleOnce(), [{ job: 'b1', server: 'survival', state: 'started' }]);
  assert.equal(api.patches, 0, 'our stale patch was refused and not repeated');
  assert.equal(api.restoreJobs().length, 1);
});

test('a conflict from an unrelated write (the chain still pending) is decided again and patched on the fresh resourceVersion', async () => {
  const { api } = setup();
  api.chain('b1', 'survival');
  let bumps = 0;
  api.beforePatch = (name) => {
    if (bumps++ > 0) return;
    api.jobs.find((x) => x.metadata?.name === name)!.metadata!.resourceVersion = String(api.rv++);
  };
  const calls: RestoreRequest[] = [];
  const inner = new TemplateRestorer(api, 'minecraft', TEMPLATE);
  const counting = new Settler(api, 'minecraft', { restore: (r) => (calls.push(r), inner.restore(r)) });
  assert.deepEqual(await counting.settleOnce(), [{ job: 'b1', server: 'survival', state: 'started' }]);
  assert.equal(api.patches, 1);
  assert.equal(api.restoreJobs().length, 1);
  // The second decision saw the restore Job the first one created, and did not call the restorer again.
  assert.equal(calls.length, 1);
});

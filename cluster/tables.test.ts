import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { minecraftServers } from './kinds/custom.ts';
import { jobs } from './kinds/job.ts';
import { pods } from './kinds/pod.ts';
import { encodeDocument, openapiDocument } from './openapi.ts';
import { asTable, humanDuration, tableRequest } from './tables.ts';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('server-side tables', () => {
  it('ages read as apimachinery’s HumanDuration writes them', () => {
    const cases: [number, string][] = [
      [-2 * S, '<invalid>'],
      [-500, '0s'],
      [0, '0s'],
      [119 * S, '119s'],
      [2 * M, '2m'],
      [2 * M + S, '2m1s'],
      [9 * M + 59 * S, '9m59s'],
      [10 * M + 30 * S, '10m'],
      [3 * H, '3h'],
      [3 * H + 30 * M, '3h30m'],
      [8 * H + 5 * M, '8h'],
      [47 * H, '47h'],
      [48 * H, '2d'],
      [49 * H, '2d1h'],
      [8 * D + 3 * H, '8d'],
      [2 * 365 * D, '2y'],
      [2 * 365 * D + 5 * D, '2y5d'],
      [9 * 365 * D, '9y'],
    ];
    for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, String(ms));
  });

  it('a Table is asked for by Accept; the first acceptable type wins; includeObject defaults to Metadata', () => {
    const kubectl = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
    assert.deepEqual(tableRequest(kubectl, null), { apiVersion: 'meta.k8s.io/v1', includeObject: 'Metadata' });
    assert.deepEqual(tableRequest('application/json;as=Table;v=v1beta1;g=meta.k8s.io', 'Object'), { apiVersion: 'meta.k8s.io/v1beta1', includeObject: 'Object' });
    assert.equal(tableRequest('application/json', null), undefined);
    assert.equal(tableRequest('application/json, application/json;as=Table;v=v1;g=meta.k8s.io', null), undefined);
    assert.equal(tableRequest('application/json;as=Table;v=v2;g=meta.k8s.io', null), undefined);
    assert.equal(tableRequest(undefined, null), undefined);
  });

  it('Pod rows: the status column follows the containers, deletion and init containers', () => {
    const now = Date.parse('2026-01-01T00:10:00Z');
    const pod = (status: object, extra: object = {}) => ({
      metadata: { name: 'p', creationTimestamp: '2026-01-01T00:00:00Z', ...extra },
      spec: { nodeName: 'local', containers: [{ name: 'a' }, { name: 'b' }] },
      status,
    });
    const row = (p: object) => asTable(pods, p as never, { apiVersion: 'meta.k8s.io/v1', includeObject: 'None' }, { now }).rows[0].cells;
    const running = { state: { running: {} }, ready: true, restartCount: 1 };
    assert.deepEqual(row(pod({ phase: 'Running', podIPs: [{ ip: '127.1.2.3' }], containerStatuses: [running, running] })), ['p', '2/2', 'Running', 2, '10m', '127.1.2.3', 'local', '<none>', '<none>']);
    assert.deepEqual(row(pod({ phase: 'Running', containerStatuses: [running, { state: { waiting: { reason: 'CrashLoopBackOff' } }, restartCount: 4 }] })).slice(1, 4), ['1/2', 'CrashLoopBackOff', 5]);
    assert.deepEqual(row(pod({ phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 3 } } }] })).slice(2, 3), ['ExitCode:3']);
    assert.deepEqual(row(pod({ phase: 'Running', containerStatuses: [running, running] }, { deletionTimestamp: '2026-01-01T00:09:00Z' })).slice(2, 3), ['Terminating']);
    assert.deepEqual(
      row({
        ...pod({ phase: 'Pending', initContainerStatuses: [{ state: { waiting: { reason: 'PodInitializing' } } }] }),
        spec: { containers: [{ name: 'a' }], initContainers: [{ name: 'i' }] },
      }).slice(1, 3),
      ['0/1', 'Init:0/1'],
    );
  });

  it('Job rows: completions, duration and the wide columns; the custom resource: name and age; headers only when asked', () => {
    const now = Date.parse('2026-01-01T01:00:00Z');
    const job = {
      metadata: { name: 'j', creationTimestamp: '2026-01-01T00:00:00Z', resourceVersion: '7' },
      spec: {
        completions: 1,
        parallelism: 1,
        selector: { matchLabels: { 'controller-uid': 'u' } },
        template: {
          spec: {
            containers: [
              { name: 'a', image: 'x' },
              { name: 'b', image: 'y' },
            ],
          },
        },
      },
      status: { succeeded: 1, startTime: '2026-01-01T00:00:01Z', completionTime: '2026-01-01T00:02:31Z' },
    };
    const t = asTable(jobs, { metadata: { resourceVersion: '9' }, items: [job] } as never, { apiVersion: 'meta.k8s.io/v1', includeObject: 'Metadata' }, { now });
    assert.deepEqual(
      t.columnDefinitions.map((c: { name: string; priority: number }) => `${c.name}/${c.priority}`),
      ['Name/0', 'Completions/0', 'Duration/0', 'Age/0', 'Containers/1', 'Images/1', 'Selector/1'],
    );
    assert.deepEqual(t.rows[0].cells, ['j', '1/1', '2m30s', '60m', 'a,b', 'x,y', 'controller-uid=u']);
    assert.deepEqual(t.rows[0].object, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: job.metadata });
    assert.equal(t.metadata.resourceVersion, '9');
    const cr = asTable(
      minecraftServers,
      { metadata: { name: 'survival', creationTimestamp: '2026-01-01T00:59:00Z', resourceVersion: '3' } } as never,
      { apiVersion: 'meta.k8s.io/v1', includeObject: 'None' },
      { now, headers: false },
    );
    assert.equal(cr.columnDefinitions, null);
    assert.deepEqual(cr.rows, [{ cells: ['survival', '60s'] }]);
    assert.equal(cr.metadata.resourceVersion, '3');
  });
});

/** A minimal protobuf reader: the fields of one message as [field number, wire type, value]. */
function fields(b: Buffer): [number, number, Buffer | number][] {
  const out: [number, number, Buffer | number][] = [];
  let i = 0;
  const varint = () => {
    let v = 0;
    let m = 1;
    for (;;) {
      const x = b[i++]!;
      v += (x & 0x7f) * m;
      if (x < 0x80) return v;
      m *= 128;
    }
  };
  while (i < b.length) {
    const key = varint();
    const wire = key & 7;
    if (wire === 0) out.push([key >>> 3, 0, varint()]);
    else if (wire === 2) {
      const n = varint();
      out.push([key >>> 3, 2, b.subarray(i, i + n)]);
      i += n;
    } else if (wire === 1) {
      out.push([key >>> 3, 1, b.subarray(i, i + 8)]);
      i += 8;
    } else throw new Error(`wire type ${wire}`);
  }
  return out;
}
const sub = (b: Buffer, f: number) =>
  fields(b)
    .filter(([n]) => n === f)
    .map(([, , v]) => v as Buffer);
const str = (b: Buffer, f: number) => sub(b, f).map((x) => x.toString('utf8'));

describe('/openapi/v2 as protobuf', () => {
  it('encodes gnostic’s Document: swagger, info, every definition by name, types, properties, required, refs and vendor extensions', () => {
    const doc = openapiDocument();
    const json = JSON.parse(doc.json.toString()) as { definitions: Record<string, unknown> };
    const pb = doc.protobuf;
    assert.deepEqual(str(pb, 1), ['2.0']);
    assert.deepEqual(str(sub(pb, 2)[0]!, 2), ['v1.20.2']);
    const named = sub(sub(pb, 9)[0]!, 1);
    assert.deepEqual(
      named.map((n) => str(n, 1)[0]),
      Object.keys(json.definitions),
    );
    const job = sub(named.find((n) => str(n, 1)[0] === 'io.k8s.api.batch.v1.Job')!, 2)[0]!;
    assert.deepEqual(str(sub(job, 22)[0]!, 1), ['object']);
    const props = sub(sub(job, 25)[0]!, 1).map((p) => str(p, 1)[0]);
    assert.deepEqual(props, ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    const spec = sub(sub(job, 25)[0]!, 1).find((p) => str(p, 1)[0] === 'spec')!;
    assert.deepEqual(str(sub(spec, 2)[0]!, 1), ['#/definitions/io.k8s.api.batch.v1.JobSpec']);
    const gvk = sub(job, 31).find((e) => str(e, 1)[0] === 'x-kubernetes-group-version-kind')!;
    assert.deepEqual(JSON.parse(str(sub(gvk, 2)[0]!, 2)[0]!), [{ group: 'batch', kind: 'Job', version: 'v1' }]);
    const jobSpec = sub(named.find((n) => str(n, 1)[0] === 'io.k8s.api.batch.v1.JobSpec')!, 2)[0]!;
    assert.deepEqual(str(jobSpec, 19), ['template']);
  });

  it('writes varints past one byte, booleans of a oneof even when false, and nested items', () => {
    const long = 'x'.repeat(300);
    const pb = encodeDocument({ swagger: '2.0', info: {}, definitions: { a: { description: long, additionalProperties: false, items: { type: 'string' }, maxLength: 1000 } } });
    const a = sub(sub(sub(pb, 9)[0]!, 1)[0]!, 2)[0]!;
    assert.equal(str(a, 4)[0], long);
    assert.deepEqual(fields(sub(a, 21)[0]!), [[2, 0, 0]]);
    assert.deepEqual(str(sub(sub(a, 23)[0]!, 1)[0]!, 22).length, 1);
    assert.deepEqual(
      fields(a).find(([n]) => n === 11),
      [11, 0, 1000],
    );
  });
});

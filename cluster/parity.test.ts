/**
 * Differences between the emulation and a real kube-apiserver (v1.20.2) that the cluster tier
 * (`npm run test:cluster`, test/emulation-parity.cluster.test.ts) found, each fixed in the emulation
 * and pinned here with the real server's answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rawFetch, shJob, type TestCluster, testCluster, waitFor } from './cluster.test-kit.ts';
import { goJsonSyntaxError, summarizeBody } from './decode.ts';

const J = '/apis/batch/v1/namespaces/minecraft/jobs';
const MC = '/apis/felis.lolicon.best/v1alpha1/namespaces/minecraft/minecraftservers';
const TYPE_META = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

describe("Go's JSON syntax errors", () => {
  it('match encoding/json for the common mistakes', () => {
    const cases: [string, string | undefined][] = [
      ['{}', undefined],
      ['[1, {"a": [true, false, null, -1.5e3]}]', undefined],
      ['', 'unexpected end of JSON input'],
      ['{', 'unexpected end of JSON input'],
      ['{"a":1,}', "invalid character '}' looking for beginning of object key string"],
      ['nope', "invalid character 'o' in literal null (expecting 'u')"],
      ['{} x', "invalid character 'x' after top-level value"],
      ['{"a" 1}', "invalid character '1' after object key"],
      ['{"a":1 "b":2}', `invalid character '"' after object key:value pair`],
      ['[1 2]', "invalid character '2' after array element"],
      ['[,]', "invalid character ',' looking for beginning of value"],
      ['{"a":-}', "invalid character '}' in numeric literal"],
      ['{"a":1.}', "invalid character '}' after decimal point in numeric literal"],
      ['{"a":1e}', "invalid character '}' in exponent of numeric literal"],
      ['"a\\x"', "invalid character 'x' in string escape code"],
      ['"a\nb"', "invalid character '\\n' in string literal"],
      ["'a'", "invalid character '\\'' looking for beginning of value"],
    ];
    for (const [text, want] of cases) assert.equal(goJsonSyntaxError(text), want, text);
  });

  it('summarizes a body as the apiserver does: objects as text, the rest in hex, 30 bytes at most', () => {
    assert.equal(summarizeBody(Buffer.from('')), '<empty>');
    assert.equal(summarizeBody(Buffer.from('{')), '{');
    assert.equal(summarizeBody(Buffer.from('[1]')), '5b315d');
    assert.equal(summarizeBody(Buffer.from(`{"apiVersion":"batch/v1","kind":"Job"} x`)), '{"apiVersion":"batch/v1","kind ...');
  });
});

describe('emulation fixes found by the cluster tier', () => {
  let t: TestCluster;
  before(async () => {
    t = await testCluster({ podTiming: () => ({ unscheduledMs: 60_000, creatingMs: 0 }) });
  });
  after(async () => {
    await t.close();
  });

  const post = async (path: string, body: string, contentType = 'application/json') => {
    const res = await rawFetch(t.cluster, path, { method: 'POST', body, headers: { 'content-type': contentType } });
    return { status: res.status, body: await res.json() };
  };

  it('undecodable bodies are 400 with the transformDecodeError wording', async () => {
    const cases: [string, string, string][] = [
      [J, '{', "the object provided is unrecognized (must be of type Job): couldn't get version/kind; json parse error: unexpected end of JSON input ({)"],
      [J, '', "the object provided is unrecognized (must be of type Job): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)"],
      [J, '[1]', `the object provided is unrecognized (must be of type Job): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type ${TYPE_META} (5b315d)`],
      [J, '"x"', `the object provided is unrecognized (must be of type Job): couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type ${TYPE_META} (227822)`],
      [J, 'nope', "the object provided is unrecognized (must be of type Job): couldn't get version/kind; json parse error: invalid character 'o' in literal null (expecting 'u') (6e6f7065)"],
      [
        MC,
        '{"a":1,}',
        "the object provided is unrecognized (must be of type MinecraftServer): couldn't get version/kind; json parse error: invalid character '}' looking for beginning of object key string ({\"a\":1,})",
      ],
      [
        J,
        '{"apiVersion":"batch/v1","kind":"Pod","metadata":{"name":"k"}}',
        'Pod in version "v1" cannot be handled as a Job: no kind "Pod" is registered for version "batch/v1" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"',
      ],
      [
        J,
        '{"apiVersion":"batch/v2","kind":"Job","metadata":{"name":"k"}}',
        'Job in version "v2" cannot be handled as a Job: no kind "Job" is registered for version "batch/v2" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"',
      ],
    ];
    for (const [path, body, message] of cases) {
      const r = await post(path, body);
      assert.equal(r.status, 400, body);
      assert.deepEqual(r.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'BadRequest', code: 400 }, body);
    }
  });

  it('a custom resource of another kind is 422 on the kind field', async () => {
    const r = await post(MC, '{"apiVersion":"felis.lolicon.best/v1alpha1","kind":"Pod","metadata":{"name":"k"}}');
    assert.equal(r.status, 422);
    assert.equal(r.body.message, 'Pod.felis.lolicon.best "k" is invalid: kind: Invalid value: "Pod": must be MinecraftServer');
    assert.deepEqual(r.body.details, {
      name: 'k',
      group: 'felis.lolicon.best',
      kind: 'Pod',
      causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: "Pod": must be MinecraftServer', field: 'kind' }],
    });
  });

  it('an unparsable resource quantity is refused by the decoder (400), not stored', async () => {
    const job = shJob('badmem', 'true');
    job.spec!.template.spec!.containers[0]!.resources = { requests: { memory: 'lots' } };
    const r = await post(J, JSON.stringify(job));
    assert.equal(r.status, 400);
    assert.equal(r.body.reason, 'BadRequest');
    assert.equal(r.body.message, `Job in version "v1" cannot be handled as a Job: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
  });

  it("a built-in PATCH with a media type the route does not consume is go-restful's 415", async () => {
    await post(J, JSON.stringify(shJob('p415', 'true')));
    for (const ct of ['application/json', 'text/plain']) {
      const res = await rawFetch(t.cluster, `${J}/p415`, { method: 'PATCH', body: '{}', headers: { 'content-type': ct } });
      assert.equal(res.status, 415);
      assert.deepEqual(await res.json(), {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: '415: Unsupported Media Type',
        reason: 'UnsupportedMediaType',
        details: {},
        code: 415,
      });
    }
  });

  it("a group nobody serves is the mux's plain-text 404; an unknown version of a served group a Status", async () => {
    const res = await rawFetch(t.cluster, '/apis/nope.io/v1/namespaces/minecraft/widgets');
    assert.equal(res.status, 404);
    assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(await res.text(), '404 page not found\n');
    const v9 = await rawFetch(t.cluster, '/apis/batch/v9/namespaces/minecraft/jobs');
    assert.equal(v9.status, 404);
    assert.equal((await v9.json()).message, 'the server could not find the requested resource');
  });

  it('pods/log: boolean options convert leniently (follow=maybe is true), and both since options are Forbidden at field "[]"', async () => {
    const maybe = await rawFetch(t.cluster, '/api/v1/namespaces/minecraft/pods/nope/log?follow=maybe');
    assert.equal(maybe.status, 404, 'the option parsed; the Pod is what is missing');
    const both = await rawFetch(t.cluster, '/api/v1/namespaces/minecraft/pods/nope/log?sinceSeconds=1&sinceTime=2020-01-01T00:00:00Z');
    const body = await both.json();
    assert.equal(both.status, 422);
    assert.equal(body.message, 'PodLogOptions "nope" is invalid: []: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified');
    assert.deepEqual(body.details.causes, [{ reason: 'FieldValueForbidden', message: 'Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified', field: '[]' }]);
  });

  it("MinecraftServer: the CRD schema's types and enum are enforced (type errors first), on the status subresource too", async () => {
    const ok = await post(MC, JSON.stringify({ apiVersion: 'felis.lolicon.best/v1alpha1', kind: 'MinecraftServer', metadata: { name: 'schema' }, spec: { desiredState: 'Stopped', extra: 1 } }));
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const bad = await post(MC, JSON.stringify({ apiVersion: 'felis.lolicon.best/v1alpha1', kind: 'MinecraftServer', metadata: { name: 'paused' }, spec: { desiredState: 'Paused' } }));
    assert.equal(bad.status, 422);
    assert.equal(bad.body.message, 'MinecraftServer.felis.lolicon.best "paused" is invalid: spec.desiredState: Unsupported value: "Paused": supported values: "", "Running", "Stopped"');
    const patch = async (path: string, body: object) => {
      const res = await rawFetch(t.cluster, path, { method: 'PATCH', body: JSON.stringify(body), headers: { 'content-type': 'application/merge-patch+json' } });
      return { status: res.status, body: await res.json() };
    };
    const both = await patch(`${MC}/schema`, { spec: { storage: { claimName: 5 }, desiredState: 'Nope' } });
    assert.equal(both.status, 422);
    assert.equal(
      both.body.message,
      'MinecraftServer.felis.lolicon.best "schema" is invalid: [spec.storage.claimName: Invalid value: "integer": spec.storage.claimName in body must be of type string: "integer", spec.desiredState: Unsupported value: "Nope": supported values: "", "Running", "Stopped"]',
    );
    assert.deepEqual(
      both.body.details.causes.map((c: { reason: string }) => c.reason),
      ['FieldValueInvalid', 'FieldValueNotSupported'],
    );
    const status = await patch(`${MC}/schema/status`, { status: { ready: 'yes', phase: 3 } });
    assert.equal(status.status, 422);
    assert.equal(
      status.body.message,
      'MinecraftServer.felis.lolicon.best "schema" is invalid: [status.phase: Invalid value: "integer": status.phase in body must be of type string: "integer", status.ready: Invalid value: "string": status.ready in body must be of type boolean: "string"]',
    );
    const notObject = await patch(`${MC}/schema`, { spec: 'x' });
    assert.equal(notObject.body.message, 'MinecraftServer.felis.lolicon.best "schema" is invalid: spec: Invalid value: "string": spec in body must be of type object: "string"');
    // A status write ignores spec, so a bad spec value there is not an error.
    assert.equal((await patch(`${MC}/schema/status`, { spec: { desiredState: 'Nope' }, status: { ready: true } })).status, 200);
  });

  it('Pods get their QoS class from requests and limits (a limit defaults its request); templates keep serviceAccount in step', async () => {
    const job = shJob('qos', 'true');
    const spec = job.spec!.template.spec!;
    spec.serviceAccountName = 'felis-restore';
    spec.containers[0]!.resources = { limits: { cpu: '500m', memory: '256Mi' } };
    const created = await post(J, JSON.stringify(job));
    assert.equal(created.status, 201);
    assert.equal(created.body.spec.template.spec.serviceAccount, 'felis-restore');
    const pod = await waitFor(async () => (await t.core.listNamespacedPod({ namespace: 'minecraft', labelSelector: 'job-name=qos' })).items[0], 'the Pod');
    assert.equal(pod.status!.qosClass, 'Guaranteed');
    assert.deepEqual({ ...pod.spec!.containers[0]!.resources }, { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '500m', memory: '256Mi' } });
    const pods = [
      [{ requests: { cpu: '100m' } }, 'Burstable'],
      [{ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1000m', memory: '1024Mi' } }, 'Guaranteed'],
      [{ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } }, 'Burstable'],
      [{}, 'BestEffort'],
    ] as const;
    for (const [i, [resources, qos]] of pods.entries()) {
      const p = await t.core.createNamespacedPod({ namespace: 'minecraft', body: { metadata: { name: `qos-${i}` }, spec: { containers: [{ name: 'c', image: 'x', resources }] } } });
      assert.equal(p.status!.qosClass, qos, JSON.stringify(resources));
    }
  });
});

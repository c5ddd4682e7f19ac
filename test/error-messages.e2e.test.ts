/**
 * Every error code of docs/errors.md, provoked by a real request over HTTP (or, for a fault no
 * request can cause, the fault hooks of the embedded cluster), and its message held to one rule:
 * no internal prefix, no syscall name, no `/proc` path, no phrase said twice, and the caller's path
 * when the error is about it. The code list is read from docs/errors.md, so a new code without a
 * case here (or a reason in EXEMPT) fails the last test.
 */

import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { linkSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { RESULT_PREFIX } from '../lib/protocol/result.ts';
import { waitOp } from './support/ops.ts';
import { admin, createServer, RUNNING, STOPPED, setServer } from './support/servers.ts';
import { q, REAL, ROOT, type Stack, startStack, TOKEN } from './support/stack.ts';

const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const write = (content: string, extra: object = {}) => ({ content: b64(content), content_sha256: sha(content), ...extra });

/** The codes of docs/errors.md's table, in its order. */
const DOC_CODES = [...readFileSync(join(ROOT, 'docs/errors.md'), 'utf8').matchAll(/^\| `([a-z_]+)` \| \d{3}/gm)].map((m) => m[1]!);

/** Codes no request can provoke on the embedded cluster in this test's time, and why. Keep it short. */
const EXEMPT: Record<string, string> = {
  cancelled: 'the caller went away: no one reads the answer',
  forbidden: 'kubernetes auth mode only (a SubjectAccessReview); test/auth.e2e.test.ts',
  auth_unavailable: 'kubernetes auth mode only (the apiserver failing a review); test/auth.e2e.test.ts',
  request_timeout: "the listener's header timeout is a minute long",
  world_reclaiming: 'a start while the reaper gives a world back: a race this test cannot hold open',
  event_answer_gone: 'an event whose first answer has expired from the record (its TTL is an hour)',
  upload_stalled: "an upload body idle past the session's idle limit (20 s here)",
  upload_busy: 'two calls to one upload session at the same instant: a race',
  upload_staging_tampered: "someone else's change to a session's staging folder between two parts: test/uploads.e2e.test.ts",
  part_too_large: 'a part body longer than its Content-Length: HTTP framing never delivers one from a conforming client',
  too_many_pulls: 'five pulls holding slow downloads at once: test/files-pull.e2e.test.ts',
  write_not_delivered: "a job key's write Pod that never takes its content: test/write-content.e2e.test.ts",
  follow_limit: 'two log follows held open for the whole case: functions/files-tail/follow.e2e.test.ts',
  follow_unavailable: 'a function without the job key, which this stack always gives: functions/files-tail/app.test.ts',
};

interface Case {
  /** The request's answer. */
  answer: () => Promise<{ status: number; body: any; text: string }>;
  /** The path the error is about, as the caller sent it: the message must name it. */
  names?: string;
}

/** A syscall's name as a word followed by a colon or a path (`lstat /q1.txt`, `openat x:`). */
const SYSCALL = /\b(?:lstat|fstatat|fstat|stat|openat|open|rename|renameat|unlink|unlinkat|mkdir|mkdirat|rmdir|readlink|readlinkat|readdirent|scandir|opendir|fsync|fchmod)(?::| \S*[./]\S*)/;
const STOP = new Set(['the', 'a', 'an', 'of', 'to', 'in', 'is', 'it', 'its', 'and', 'or', 'not', 'be', 'for', 'on', 'at', 'by', 'as', 'no', 'this', 'that', 'with', 'was', 'are']);

/** A pair of words (not both little ones) said twice: "already exists: x already exists". */
function doubled(message: string): string | undefined {
  // Names and identifiers (`dev.felis.files.write`, `FELIS_JOB_KEY_FILE`, `forwarding-secrets=`, paths) are no phrases.
  const prose = message
    .split(/\s+/)
    .filter((t) => !/[._/=-]/.test(t.replace(/[.,;:)]+$/, '')))
    .join(' ');
  const words = prose.toLowerCase().match(/[a-z]+/g) ?? [];
  const seen = new Set<string>();
  for (let i = 0; i + 1 < words.length; i++) {
    if (STOP.has(words[i]!) || STOP.has(words[i + 1]!)) continue;
    const pair = `${words[i]} ${words[i + 1]}`;
    if (seen.has(pair)) return pair;
    seen.add(pair);
  }
  return undefined;
}

/** The rule every message keeps. */
function assertPlain(code: string, message: string, names?: string): void {
  assert.equal(typeof message, 'string', code);
  assert.doesNotMatch(message, /fileedit:/, `${code}: an internal prefix: ${message}`);
  assert.doesNotMatch(message, /\/proc\//, `${code}: a /proc path: ${message}`);
  assert.doesNotMatch(message, SYSCALL, `${code}: a syscall name: ${message}`);
  assert.equal(doubled(message), undefined, `${code}: a phrase said twice: ${message}`);
  if (names !== undefined) {
    const inWorld = names.replace(/^\/+/, '');
    assert.ok(message.includes(names) || message.includes(inWorld), `${code}: the message does not name ${names}: ${message}`);
  }
}

/** One raw HTTP/1.1 exchange, for what fetch will not send (oversized headers). */
function raw(url: string, request: string): Promise<{ status: number; body: any; text: string }> {
  const port = Number(new URL(url).port);
  return new Promise((res, rej) => {
    const c = net.connect(port, '127.0.0.1');
    let d = '';
    c.on('data', (x) => (d += x));
    c.on('error', rej);
    c.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(d)?.[1] ?? 0);
      const body = d.slice(d.indexOf('\r\n\r\n') + 4);
      // A chunked answer: the JSON is the first chunk.
      const json = body.slice(body.indexOf('{'), body.lastIndexOf('}') + 1);
      res({ status, body: json ? JSON.parse(json) : undefined, text: d });
    });
    c.end(request);
  });
}

/** Posts one CloudEvent (binary mode unless `headers` say otherwise). */
async function deliver(s: Stack, headers: Record<string, string>, body: string): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`${s.url}/`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, ...headers }, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

const binaryEvent = (type: string, id = randomUUID()) => ({ 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-id': id, 'ce-source': '/tests/errors', 'ce-type': type });
const printing = (out: string) => () => ({ command: ['sh', '-c', `printf '%s' "$0"`, out] });
const S = '/api/v1/servers/survival';

// The embedded tier only: a message is the functions' and the Job's text, the same on any control
// plane, and a third of the cases need what the real tier has not (the emulation's fault hooks, a
// ReadWriteOncePod claim, which v1.20 refuses). Each route's own e2e test runs on both tiers.
describe('every error code has a plain message', { skip: REAL && 'embedded tier only: fault hooks and ReadWriteOncePod (see above)' }, () => {
  let s: Stack;
  /** No downloads and a short deadline: export_unavailable, files_timeout, pull_cancel_unavailable. */
  let bare: Stack;
  let none: Stack;
  let origin: http.Server;
  let base: string;

  before(async () => {
    origin = http.createServer((req, res) => {
      if (req.url?.startsWith('/slow')) {
        res.writeHead(200, { 'content-length': 1 << 30 });
        const t = setInterval(() => res.write(Buffer.alloc(16 << 10)), 50);
        res.on('close', () => clearInterval(t));
        return;
      }
      res.writeHead(req.url?.startsWith('/ok') ? 200 : 404).end('hello');
    });
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    [s, bare, none] = await Promise.all([
      startStack({
        browse: {},
        downloads: { urlSeconds: 2, maxPerServer: 1, startTimeoutMs: 2500 },
        // Signed upload URLs live 3 s here, so one can be seen expire.
        uploads: { idleSeconds: 20, lifetimeSeconds: 600, urlSeconds: 3 },
        editor: { pullEnv: { FELIS_PULL_ALLOW: '127.0.0.1', FELIS_PULL_IDLE_TIMEOUT_SECONDS: '30' } },
      }),
      startStack({ editor: { timeoutMs: 2500 } }),
      startStack({ noImage: true }),
    ]);
    await createServer(s.cluster, 'running', RUNNING);
    await createServer(s.cluster, 'novolume', undefined, false);
    // Only the game's Pod may mount a ReadWriteOncePod claim: no Job reads beside it.
    await createServer(s.cluster, 'exclusive', RUNNING, false);
    await admin(s.cluster).core.createNamespacedPersistentVolumeClaim({
      namespace: 'minecraft',
      body: { metadata: { name: 'world-exclusive-0' }, spec: { accessModes: ['ReadWriteOncePod'], resources: { requests: { storage: '1Gi' } } } },
    });
    await createServer(s.cluster, 'held');
    await createServer(s.cluster, 'migrating');
  });
  after(async () => {
    for (const x of [s, bare, none]) {
      x?.cluster.faults.clear();
      if (x) x.program = undefined;
    }
    await Promise.all([s?.close(), bare?.close(), none?.close()]);
    origin?.closeAllConnections();
    origin?.close();
  });

  const lockOn = (server: string, holder: string) =>
    setServer(s.cluster, server, { ...STOPPED, annotations: { 'felis.lolicon.best/maintenance': `${holder}@${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}` } });
  /** The upload session the upload cases share (one per server). */
  let session = '';
  const begin = async (path: string, size: number) => {
    const r = await s.call('POST', `${S}/files/uploads?path=${q(path)}`, { size });
    assert.equal(r.status, 201, r.text);
    return r.body.id as string;
  };
  const withProgram = async <T>(st: Stack, out: string, fn: () => Promise<T>): Promise<T> => {
    st.program = printing(out);
    try {
      return await fn();
    } finally {
      st.program = undefined;
    }
  };
  const withFault = async <T>(st: Stack, selector: string, b: Parameters<Stack['cluster']['faults']['pod']>[1], fn: () => Promise<T>): Promise<T> => {
    st.cluster.faults.pod(selector, b);
    try {
      return await fn();
    } finally {
      st.cluster.faults.clear();
    }
  };
  const signed = async (path: string) => {
    const r = await s.call('POST', `${S}/files/download?path=${q(path)}`);
    assert.equal(r.status, 200, r.text);
    return r.body.url as string;
  };
  const get = async (url: string, headers: Record<string, string> = {}) => {
    const res = await fetch(s.url + url, { headers });
    const text = await res.text();
    return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : undefined, text };
  };
  const opError = async (st: Stack, r: { status: number; body: any; text: string }) => {
    assert.equal(r.status, 202, r.text);
    const op = await waitOp(st, r.body.op.id);
    return { status: 200, body: { error: op.error }, text: JSON.stringify(op) };
  };

  /** A signed upload URL for `path` on survival, absolute. */
  const signUpload = async (path: string) => {
    const r = await s.call('POST', `${S}/files/upload-url?path=${q(path)}`);
    assert.equal(r.status, 200, r.text);
    const url = r.body.url as string;
    return url.startsWith('http') ? url : `${s.url}${url}`;
  };
  /** A raw PUT to a signed URL, with no bearer. */
  const putRaw = async (url: string, body: string) => {
    const res = await fetch(url, { method: 'PUT', body });
    const text = await res.text();
    return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : undefined, text };
  };

  const CASES: Record<string, Case> = {
    bad_request: { answer: () => s.call('GET', `${S}/file`) },
    bad_name: { answer: () => s.call('GET', '/api/v1/servers/Not_A_Name/files') },
    bad_path: { answer: () => s.call('GET', `${S}/file?path=${q('/../x.txt')}`), names: '/../x.txt' },
    digest_required: { answer: () => s.call('PUT', `${S}/file?path=d.txt`, { content: b64('x') }) },
    bad_digest: { answer: () => s.call('PUT', `${S}/file?path=d.txt`, { content: b64('x'), content_sha256: 'zz' }) },
    digest_mismatch: { answer: () => s.call('PUT', `${S}/file?path=d.txt`, { content: b64('x'), content_sha256: sha('y') }) },
    unauthorized: {
      answer: async () => {
        const res = await fetch(`${s.url}${S}/files`);
        const text = await res.text();
        return { status: res.status, body: JSON.parse(text), text };
      },
    },
    not_found: { answer: () => s.call('GET', `${S}/file?path=${q('/nope/none.txt')}`), names: '/nope/none.txt' },
    trash_not_found: { answer: () => s.call('POST', `${S}/files/trash/0123456789abcdef/restore`, {}) },
    op_not_found: { answer: () => s.call('GET', `${S}/files/ops/0123456789abcdef`) },
    gzip_invalid: { answer: () => s.call('GET', `${S}/file?path=eula.txt&decompress=true`), names: 'eula.txt' },
    nbt_invalid: { answer: () => s.call('GET', `${S}/files/nbt?path=eula.txt`), names: 'eula.txt' },
    region_invalid: { answer: () => s.call('GET', `${S}/files/region?path=${q('world/region/r.0.x.mca')}`), names: 'world/region/r.0.x.mca' },
    upload_url_used: {
      answer: async () => {
        // Two uses at once: one places its file, the other finds the URL spent.
        const url = await signUpload('used.txt');
        const both = await Promise.all([putRaw(url, 'one'), putRaw(url, 'two')]);
        const spent = both.find((r) => r.status !== 200);
        assert.ok(spent && both.some((r) => r.status === 200), JSON.stringify(both));
        return spent;
      },
    },
    upload_url_expired: {
      answer: async () => {
        const url = await signUpload('late.txt');
        await new Promise((res) => setTimeout(res, 3500));
        return putRaw(url, 'late');
      },
    },
    method_not_allowed: { answer: () => s.call('PATCH', `${S}/file?path=eula.txt`) },
    upload_not_found: { answer: () => s.call('GET', `${S}/files/uploads/${'0'.repeat(32)}`) },
    not_stopped: { answer: () => s.call('PUT', '/api/v1/servers/running/file?path=a.txt', write('a')) },
    no_world_volume: { answer: () => s.call('GET', '/api/v1/servers/novolume/files') },
    volume_exclusive: { answer: () => s.call('GET', '/api/v1/servers/exclusive/file?path=eula.txt') },
    maintenance_in_progress: {
      answer: async () => {
        await lockOn('held', 'file-write');
        return s.call('PUT', '/api/v1/servers/held/file?path=a.txt', write('a'));
      },
    },
    lock_fresh: { answer: () => s.call('DELETE', '/api/v1/servers/held/lock') },
    lock_protected: {
      answer: async () => {
        await lockOn('migrating', 'migration');
        return s.call('DELETE', '/api/v1/servers/migrating/lock?force=true');
      },
    },
    withheld_linked: {
      answer: async () => {
        linkSync(join(s.world, 'config/paper-global.yml'), join(s.world, 'config/secret-link.yml'));
        return s.call('DELETE', `${S}/file?path=${q('config/paper-global.yml')}`);
      },
      names: 'config/paper-global.yml',
    },
    redacted_value_unknown: { answer: () => s.call('PUT', `${S}/file?path=server.properties`, write('motd=x\nforwarding-secrets=<redacted by felis>\n')), names: 'server.properties' },
    file_changed: { answer: () => s.call('PUT', `${S}/file?path=eula.txt`, write('eula=false\n', { expect_sha256: sha('other') })), names: 'eula.txt' },
    file_exists: { answer: () => s.call('POST', `${S}/files/mkdir?path=${q('/config')}`), names: '/config' },
    mixed_folders: { answer: () => s.call('POST', `${S}/files/compress`, { paths: ['config/a.yml', 'plugins/b.jar'], format: 'zip' }), names: 'plugins/b.jar' },
    batch_conflict: { answer: () => s.call('POST', `${S}/files/delete`, { paths: ['eula.txt', '/eula.txt'] }), names: 'eula.txt' },
    event_conflict: {
      answer: async () => {
        const id = randomUUID();
        const data = (path: string) => JSON.stringify({ server: 'survival', path, body: write('e\n') });
        const first = await deliver(s, binaryEvent('dev.felis.files.write', id), data('event-a.txt'));
        assert.equal(first.status, 200, first.text);
        return deliver(s, binaryEvent('dev.felis.files.write', id), data('event-b.txt'));
      },
    },
    upload_offset_mismatch: {
      answer: async () => {
        session = await begin('plugins/offset.bin', 4);
        const res = await fetch(`${s.url}${S}/files/uploads/${session}?offset=2`, {
          method: 'PUT',
          body: 'ab',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-digest': `sha-256=:${createHash('sha256').update('ab').digest('base64')}:` },
        });
        const text = await res.text();
        return { status: res.status, body: JSON.parse(text), text };
      },
    },
    upload_incomplete: { answer: () => s.call('POST', `${S}/files/uploads/${session}/commit`, { overwrite: false, sha256: sha('abcd') }) },
    too_many_uploads: { answer: () => s.call('POST', `${S}/files/uploads?path=${q('plugins/second.bin')}`, { size: 1 }) },
    upload_paused: {
      answer: async () => {
        const pods = async () => (await admin(s.cluster).core.listNamespacedPod({ namespace: 'minecraft', labelSelector: `felis.lolicon.best/upload-session=${session}` })).items;
        for (const pod of await pods()) await admin(s.cluster).core.deleteNamespacedPod({ namespace: 'minecraft', name: pod.metadata!.name!, gracePeriodSeconds: 0 });
        let last = await s.call('GET', `${S}/files/uploads/${session}`);
        for (const end = Date.now() + 15_000; last.status === 200 && Date.now() < end; ) {
          await new Promise((r) => setTimeout(r, 200));
          last = await s.call('GET', `${S}/files/uploads/${session}`);
        }
        return last;
      },
    },
    upload_staging_full: {
      answer: async () => {
        await s.call('DELETE', `${S}/files/uploads/${session}`);
        return s.call('POST', `${S}/files/uploads?path=${q('plugins/huge.bin')}`, { size: 2 ** 52 });
      },
      names: 'plugins/huge.bin',
    },
    length_required: {
      answer: async () => {
        // A streamed body goes chunked, without a Content-Length.
        const body = new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(Buffer.from('a'));
            c.close();
          },
        });
        const res = await fetch(`${s.url}${S}/files/upload?path=u.bin`, {
          method: 'PUT',
          body,
          headers: { authorization: `Bearer ${TOKEN}`, 'content-digest': `sha-256=:${createHash('sha256').update('a').digest('base64')}:` },
          duplex: 'half',
        } as RequestInit);
        const text = await res.text();
        return { status: res.status, body: JSON.parse(text), text };
      },
    },
    // A write's JSON body may hold 1 MiB of content (base64: 1.34 MiB) and its fields: past 2 MiB it is too large.
    too_large: { answer: () => s.call('PUT', `${S}/file?path=big.txt`, { content: 'A'.repeat((2 << 20) + 1) }) },
    headers_too_large: { answer: () => raw(s.url, `GET ${S}/files HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(40 << 10)}\r\nConnection: close\r\n\r\n`) },
    // A Job's program replaced (the stack without serving Pods, which would answer instead).
    internal: { answer: () => withProgram(bare, `${RESULT_PREFIX}{"code":"quantum_flux","error":"?"}\n`, () => bare.call('GET', `${S}/file?path=eula.txt`)) },
    read_damaged: { answer: () => withProgram(bare, `${RESULT_PREFIX}{"content":"aGk=","sha256":"x","content_sha256":"${sha('not hi')}"}\n`, () => bare.call('GET', `${S}/file?path=eula.txt`)) },
    volume_full: {
      answer: () =>
        withProgram(bare, `${RESULT_PREFIX}{"code":"no_space","error":"the server's volume is full; full.txt was left unchanged"}\n`, () => bare.call('PUT', `${S}/file?path=full.txt`, write('x'))),
      names: 'full.txt',
    },
    outcome_unknown: { answer: () => withProgram(bare, 'no result\n', () => bare.call('DELETE', `${S}/file?path=eula.txt`)) },
    files_unavailable: { answer: () => none.call('GET', `${S}/files`) },
    export_unavailable: { answer: () => bare.call('GET', '/api/v1/exports/x/download') },
    files_timeout: { answer: () => withFault(bare, 'felis.lolicon.best/files-mode=read', { neverStart: true }, () => bare.call('GET', `${S}/file?path=eula.txt`)) },
    event_malformed: { answer: () => deliver(s, { 'content-type': 'application/cloudevents+json' }, '[1]') },
    event_batch: { answer: () => deliver(s, { 'content-type': 'application/cloudevents-batch+json' }, '[]') },
    event_invalid: { answer: () => deliver(s, { 'content-type': 'application/cloudevents+json' }, JSON.stringify({ specversion: '1.0', source: '/x', type: 'dev.felis.files.write' })) },
    event_missing: { answer: () => deliver(s, { 'content-type': 'application/json' }, '{}') },
    event_type_unknown: { answer: () => deliver(s, binaryEvent('dev.felis.nothing'), '{}') },
    event_data_type: { answer: () => deliver(s, { ...binaryEvent('dev.felis.files.write'), 'content-type': 'text/plain' }, 'hello') },
    event_data_invalid: { answer: () => deliver(s, binaryEvent('dev.felis.files.write'), JSON.stringify({ server: 'survival', nonsense: 1 })) },
    pull_refused: { answer: async () => opError(s, await s.call('POST', `${S}/files/pull`, { url: 'http://169.254.169.254/latest/x', path: '/' })) },
    pull_failed: { answer: async () => opError(s, await s.call('POST', `${S}/files/pull`, { url: `${base}/missing.jar`, path: '/plugins' })) },
    pull_cancelled: {
      answer: async () => {
        const r = await s.call('POST', `${S}/files/pull`, { url: `${base}/slow.bin`, path: '/plugins' });
        assert.equal(r.status, 202, r.text);
        const id = r.body.op.id as string;
        await waitOp(s, id, (o) => o.done > 0);
        const cancel = await s.call('DELETE', `${S}/files/pull/${id}`);
        assert.ok(cancel.status < 300, cancel.text);
        const op = await waitOp(s, id);
        CASES.pull_not_running!.answer = () => s.call('DELETE', `${S}/files/pull/${id}`);
        return { status: 200, body: { error: op.error }, text: JSON.stringify(op) };
      },
    },
    pull_not_running: { answer: async () => ({ status: 0, body: undefined, text: 'pull_cancelled did not run first' }) },
    pull_cancel_unavailable: { answer: () => bare.call('DELETE', `${S}/files/pull/${'0'.repeat(16)}`) },
    // Last: the export Job a download starts holds the world while it lasts.
    export_expired: {
      answer: async () => {
        const url = await signed('eula.txt');
        await new Promise((r) => setTimeout(r, 3000));
        return get(url);
      },
    },
    range_not_satisfiable: { answer: async () => get(await signed('eula.txt'), { range: 'bytes=1000-' }) },
    export_busy: {
      answer: () =>
        withFault(s, 'felis.lolicon.best/export-mode=files', { neverStart: true }, async () => {
          const [a, b] = [await signed('eula.txt'), await signed('server.properties')];
          const first = get(a);
          await new Promise((r) => setTimeout(r, 500));
          const busy = await get(b);
          const timedOut = await first;
          CASES.export_timeout!.answer = async () => timedOut;
          return busy;
        }),
    },
    export_timeout: { answer: async () => ({ status: 0, body: undefined, text: 'export_busy did not run first' }) },
  };

  for (const [code, c] of Object.entries(CASES)) {
    test(code, async (t) => {
      const r = await c.answer();
      assert.equal(r.body?.error?.code, code, `${code}: ${r.status} ${r.text.slice(0, 500)}`);
      assertPlain(code, r.body.error.message, c.names);
      // The reporter shows every message, for a reader to judge the words too.
      t.diagnostic(`${r.status} ${r.body.error.message}`);
    });
  }

  test('every code of docs/errors.md has a case or a reason it has none', () => {
    assert.ok(DOC_CODES.length > 50, 'the table was read');
    const missing = DOC_CODES.filter((c) => !(c in CASES) && !(c in EXEMPT));
    assert.deepEqual(missing, [], 'codes with neither a case nor an exemption');
    const stale = [...Object.keys(CASES), ...Object.keys(EXEMPT)].filter((c) => !DOC_CODES.includes(c));
    assert.deepEqual(stale, [], 'cases or exemptions of codes docs/errors.md does not list');
    for (const c of Object.keys(CASES)) assert.ok(!(c in EXEMPT), `${c} is both provoked and exempt`);
  });
});

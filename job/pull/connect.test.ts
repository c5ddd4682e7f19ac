import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { listenForCancel } from '../serve/cancel-server.ts';

async function listen(handler: http.RequestListener): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  server.on('connect', (req, socket) => {
    hits.push(`CONNECT ${req.url}`);
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, hits };
}

test("the environment's proxy changes nothing (NODE_USE_ENV_PROXY, HTTP_PROXY); the control request does use it", async () => {
  const proxy = await listen((_q, res) => res.writeHead(502).end('proxied'));
  const originSrv = await listen((_q, res) => res.writeHead(200).end('direct'));
  const url = `http://127.0.0.1:${originSrv.port}/file`;
  const script = `
    import http from 'node:http';
    import { openPull } from ${JSON.stringify(new URL('./connect.ts', import.meta.url).href)};
    import { policyFromEnv } from ${JSON.stringify(new URL('./guard.ts', import.meta.url).href)};
    const o = await openPull(${JSON.stringify(url)}, { policy: policyFromEnv({ FELIS_PULL_ALLOW: '127.0.0.1' }) });
    let body = '';
    for await (const c of o.response) body += c;
    const control = await new Promise((resolve) => http.get(${JSON.stringify(`${url}?control`)}, (r) => { let b = ''; r.on('data', (c) => (b += c)); r.on('end', () => resolve(b)); }).on('error', (e) => resolve(String(e))));
    console.log(JSON.stringify({ body, control }));
  `;
  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_USE_ENV_PROXY: '1',
    HTTP_PROXY: `http://127.0.0.1:${proxy.port}`,
    http_proxy: `http://127.0.0.1:${proxy.port}`,
    HTTPS_PROXY: `http://127.0.0.1:${proxy.port}`,
  };
  delete env.NO_PROXY;
  delete env.no_proxy;
  // Not execFileSync: the servers of this process must keep answering meanwhile.
  const out = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8', timeout: 20_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
  const got = JSON.parse(out.trim().split('\n').at(-1)!);
  assert.equal(got.body, 'direct');
  // The control (the global agent) went through the proxy: the env really was in effect.
  assert.equal(got.control, 'proxied');
  assert.deepEqual(originSrv.hits, ['GET /file']);
  assert.equal(proxy.hits.length, 1);
  assert.match(proxy.hits[0], /control/);
});

test('the cancel listener: the right token cancels (202); a wrong token 401, another path 404, GET 405', async () => {
  const token = 'a'.repeat(64);
  const digest = createHash('sha256').update(token).digest('hex');
  const l = (await listenForCancel({ FELIS_POD_IP: '127.0.0.1', FELIS_SERVE_PORT: '0', FELIS_SERVE_TOKEN_SHA256: digest }))!;
  after(() => l.close());
  const call = (method: string, path: string, t: string) => fetch(`http://127.0.0.1:${l.port}${path}`, { method, headers: { authorization: `Bearer ${t}` } }).then((r) => r.status);
  assert.equal(await call('POST', '/cancel', 'b'.repeat(64)), 401);
  assert.equal(await call('POST', '/other', token), 404);
  assert.equal(await call('GET', '/cancel', token), 405);
  assert.equal(l.signal.aborted, false);
  assert.equal(await call('POST', '/cancel', token), 202);
  assert.equal(l.signal.aborted, true);
  assert.equal(await listenForCancel({}), undefined, 'no token digest: no listener');
});

/**
 * A signed upload URL used from a page on another origin (`npm run test:browser`): Debian's
 * Chromium, headless, opens a tiny page served by a second loopback server (`localhost`, while the
 * API listens on `127.0.0.1`: another origin), which is allowed by FELIS_CORS_ORIGINS. The test
 * signs the URL with the bearer from Node and hands it to the page; the page `fetch`es it with a
 * `FormData` holding a `File`, as a panel does, and must read the answer (so CORS let it); then
 * the test lists the folder and finds the file with the page's bytes.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type BrowserContext, chromium } from 'playwright-core';
import { type Stack, startStack } from '../support/stack.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const PAGE = '<!doctype html><meta charset="utf-8"><title>a panel</title><p>a panel on another origin</p>';

let stack: Stack | undefined;
let pageServer: http.Server | undefined;
let pageOrigin = '';
let context: BrowserContext | undefined;
let profile: string | undefined;

before(async () => {
  pageServer = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(PAGE);
  });
  await new Promise<void>((r) => pageServer!.listen(0, 'localhost', r));
  pageOrigin = `http://localhost:${(pageServer.address() as { port: number }).port}`;
  // The page's origin is the one FELIS_CORS_ORIGINS lists (the stack's `corsOrigins`).
  stack = await startStack({ browse: {}, corsOrigins: [pageOrigin] });
  profile = mkdtempSync(join(tmpdir(), 'felis-chromium-'));
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS });
});

after(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await stack?.close();
  await new Promise((r) => pageServer?.close(r));
});

test('a page on another origin uploads a file through a signed URL with fetch and FormData, and the file is listed', { timeout: 120_000 }, async () => {
  const s = stack!;
  assert.notEqual(new URL(s.url).origin, pageOrigin, 'the page is on another origin than the API');
  const signed = await s.call('POST', '/api/v1/servers/survival/files/upload-url?path=plugins');
  assert.equal(signed.status, 200, signed.text);
  // Origin-relative in this stack: the panel resolves it against the API it called.
  const url = new URL(signed.body.url as string, s.url).href;

  const page = await context!.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  assert.equal((await page.goto(pageOrigin))?.status(), 200);
  const answer = await page.evaluate(async (u) => {
    const fd = new FormData();
    fd.append('files', new File(['hello from a page on another origin\n'], 'from-page.txt', { type: 'text/plain' }));
    try {
      const r = await fetch(u, { method: 'POST', body: fd });
      return { status: r.status, body: await r.text() };
    } catch (e) {
      // Without CORS for this origin the browser hides the answer: fetch rejects.
      return { status: 0, body: String(e) };
    }
  }, url);
  assert.equal(answer.status, 200, `${answer.body}\n${problems.join('\n')}`);
  const body = JSON.parse(answer.body) as { files: { path: string; size: number }[] };
  assert.deepEqual(
    body.files.map((f) => [f.path, f.size]),
    [['plugins/from-page.txt', 36]],
  );

  const list = await s.call('GET', '/api/v1/servers/survival/files?path=plugins');
  assert.equal(list.status, 200, list.text);
  assert.ok(
    list.body.entries.some((e: { name: string }) => e.name === 'from-page.txt'),
    JSON.stringify(list.body.entries),
  );
  assert.equal(readFileSync(join(s.world, 'plugins', 'from-page.txt'), 'utf8'), 'hello from a page on another origin\n');
  assert.deepEqual(problems, [], 'no script error on the page');
});

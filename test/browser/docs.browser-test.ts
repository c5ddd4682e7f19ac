/**
 * `/docs` in a real browser (`npm run test:browser`): Debian's Chromium, headless, with a fresh
 * profile, opens the page the functions serve, with every request to another origin refused (the
 * page must work with no internet). Swagger UI must render one operation for every method and
 * path of the served /openapi.json, with no warning about the document, no script error, CSP
 * violation or failed request; a screenshot is written to test-results/docs.png.
 */

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type BrowserContext, chromium } from 'playwright-core';
import { ROOT, type Stack, startStack } from '../support/stack.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const RESULTS = join(ROOT, 'test-results');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let stack: Stack | undefined;
let context: BrowserContext | undefined;
let profile: string | undefined;

before(async () => {
  stack = await startStack();
  profile = mkdtempSync(join(tmpdir(), 'felis-chromium-'));
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1280, height: 900 } });
});

after(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await stack?.close();
});

test('/docs renders every operation of /openapi.json from this origin alone, and is screenshotted', { timeout: 120_000 }, async () => {
  const origin = new URL(stack!.url).origin;
  const elsewhere: string[] = [];
  await context!.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) return route.continue();
    elsewhere.push(url);
    return route.abort();
  });
  const page = await context!.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} for ${r.url()}`);
  });

  const doc = (await (await fetch(`${stack!.url}/openapi.json`)).json()) as { info: { title: string }; paths: Record<string, Record<string, unknown>> };
  const expected = Object.entries(doc.paths)
    .flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
  assert.ok(expected.length > 0, 'the document has operations');

  const res = await page.goto(`${stack!.url}/docs`, { waitUntil: 'load' });
  assert.equal(res?.status(), 200);
  // A page that never renders says why: what the browser refused or failed to load.
  const rendering = (err: Error) => assert.fail(`${err.message}\nwhat the page ran into:\n${problems.join('\n') || '(nothing)'}`);
  await page.locator('.swagger-ui .info .title').filter({ hasText: doc.info.title }).waitFor({ timeout: 30_000 }).catch(rendering);
  await page
    .locator('.opblock')
    .nth(expected.length - 1)
    .waitFor({ timeout: 30_000 })
    .catch(rendering);
  const rendered = (
    await page
      .locator('.opblock .opblock-summary')
      .evaluateAll((els) => els.map((e) => `${e.querySelector('.opblock-summary-method')?.textContent?.trim()} ${e.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`))
  ).sort();
  assert.deepEqual(rendered, expected, 'one rendered operation per method and path of the document');
  // Swagger UI shows what it cannot read in the document (a bad $ref, an unsupported dialect) in these boxes.
  assert.deepEqual(await page.locator('.swagger-ui .errors-wrapper').allInnerTexts(), [], 'no error or warning about the document');

  mkdirSync(RESULTS, { recursive: true });
  const shot = join(RESULTS, 'docs.png');
  await page.screenshot({ path: shot, fullPage: true });
  assert.ok(statSync(shot).size > 10_000, 'the screenshot holds a page');
  console.log(`# screenshot of /docs: ${shot}`);

  assert.deepEqual(elsewhere, [], 'the page asked for nothing outside this origin');
  assert.deepEqual(problems, [], 'no script error, CSP violation or failed request');
});

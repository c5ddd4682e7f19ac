/**
 * The API reference, served by every function without auth: `GET /openapi.json` (the checked-in
 * document) and `GET /docs`, a page that renders it with Swagger UI. The page's scripts and styles
 * come from this server (`/docs/assets/*`), never a CDN, so it works with no internet, and its CSP
 * allows nothing but this origin.
 *
 * The document and the Swagger UI files are read from disk on the first request that asks, never
 * bundled (the document is the largest text of the API, and no route needs it to serve): in a
 * bundle from `docs-assets/` beside the function bundles (scripts/build.ts copies them there),
 * otherwise from docs/ and node_modules.
 * @module
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Env, Hono } from 'hono';

/** The swagger-ui-dist files the page loads, with their content types: nothing else is served. */
export const SWAGGER_UI_FILES: Record<string, string> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/** Where the build puts {@link SWAGGER_UI_FILES} and {@link OPENAPI_DOCUMENT}, beside the function bundles. */
export const DOCS_ASSETS_DIR = 'docs-assets';
/** The document's file name, in docs/ of the repository and in {@link DOCS_ASSETS_DIR}. */
export const OPENAPI_DOCUMENT = 'openapi.json';

/**
 * Only this origin: no inline script or style, no other host, not framed elsewhere. The one
 * exception is `data:` images: swagger-ui.css draws its icons (copy, expand) as inline SVG there.
 */
export const DOCS_CSP = "default-src 'self'; img-src 'self' data:; base-uri 'self'; form-action 'self'; frame-ancestors 'self'; object-src 'none'";

// No inline script (the CSP forbids it): the page starts Swagger UI from this file. No validator
// (it would load a badge from swagger.io).
const INIT_JS = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>felis-world API reference</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/docs-init.js"></script>
</body>
</html>
`;

/** The document as served: compact JSON, newline-terminated, as every JSON answer here is. */
let documentText: Promise<string> | undefined;
export function openApiText(): Promise<string> {
  if (!documentText) {
    const file = join(bundledAssets(OPENAPI_DOCUMENT) ?? fileURLToPath(new URL('../../docs/', import.meta.url)), OPENAPI_DOCUMENT);
    documentText = readFile(file, 'utf8').then((text) => JSON.stringify(JSON.parse(text)) + '\n');
    // A failed read is not kept: the next request tries again.
    documentText.catch(() => (documentText = undefined));
  }
  return documentText;
}

/** The bundle's `docs-assets/` when it holds `file` (this module may sit in a chunk one level down). */
function bundledAssets(file: string): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  return [join(here, DOCS_ASSETS_DIR), join(here, '..', DOCS_ASSETS_DIR)].find((d) => existsSync(join(d, file)));
}

let assetsDir: string | undefined;
/** The folder holding {@link SWAGGER_UI_FILES}: the bundle's copy, else swagger-ui-dist. */
function swaggerUiDir(): string {
  assetsDir ??= bundledAssets('swagger-ui-bundle.js') ?? dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return assetsDir;
}

const cache = new Map<string, Promise<Buffer>>();
function asset(file: string): Promise<Buffer> {
  let p = cache.get(file);
  if (!p) {
    p = readFile(join(swaggerUiDir(), file));
    // A failed read is not kept: the next request tries again.
    p.catch(() => cache.delete(file));
    cache.set(file, p);
  }
  return p;
}

const pageHeaders = (type: string) => ({ 'Content-Type': type, 'Content-Security-Policy': DOCS_CSP, 'X-Content-Type-Options': 'nosniff' });

/** Adds `/openapi.json`, `/docs` and `/docs/assets/*` to `app` (outside `/api/*`, so without auth). */
export function mountApiDocs<E extends Env>(app: Hono<E>): void {
  app.get('/openapi.json', async (c) => c.body(await openApiText(), 200, { 'Content-Type': 'application/json; charset=utf-8' }));
  app.get('/docs', (c) => c.body(PAGE, 200, { ...pageHeaders('text/html; charset=utf-8'), 'Cache-Control': 'no-cache' }));
  app.get('/docs/assets/:file', async (c: Context<E>) => {
    const file = c.req.param('file') ?? '';
    if (file === 'docs-init.js') return c.body(INIT_JS, 200, pageHeaders('text/javascript; charset=utf-8'));
    // Only the listed names: a path that leaves the folder is no name here, and answers 404.
    const type = Object.hasOwn(SWAGGER_UI_FILES, file) ? SWAGGER_UI_FILES[file]! : undefined;
    if (!type) return c.notFound();
    const body = await asset(file);
    return c.body(new Uint8Array(body), 200, { ...pageHeaders(type), 'Cache-Control': 'public, max-age=3600' });
  });
}

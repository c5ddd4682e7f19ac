/**
 * No text a caller can read names a route that is not there: every string in the code of lib/,
 * functions/ and job/ (messages, prose, the usage) that mentions a route — `.../files/uploads`,
 * `/api/v1/servers/...`, with or without its method — must name one of the route table's, with
 * that method when it gives one. A message pointing a panel at a route that does not exist sends
 * it nowhere, and nothing else would notice.
 * @module
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { ROUTES } from './table.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** What a `${…}` in a template stands for: any one segment. */
const HOLE = '\u0000';
const METHODS = 'GET|HEAD|POST|PUT|PATCH|DELETE';
/** A route mention: an optional method, then `.../rest` (the server's routes) or `/api/v1/rest`. */
const MENTION = new RegExp(`(?:\\b(${METHODS}) )?((?:\\.\\.\\.|/api/v1)/[A-Za-z0-9_.:{}<>\\-/${HOLE}]*)`, 'g');
/** Where `...` stands in a mention. */
const SERVER_PREFIX = '/api/v1/servers/:name';

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'testing') sourceFiles(p, out);
    } else if (/\.ts$/.test(e.name) && !/\.test\.ts$|\.test-kit\.ts$|\.generated\.ts$/.test(e.name)) out.push(p);
  }
  return out;
}

/** Every string literal's text in a file (a template's `${…}` as HOLE), with its line. */
function stringsOf(file: string): { text: string; line: number }[] {
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: { text: string; line: number }[] = [];
  const visit = (n: ts.Node): void => {
    let text: string | undefined;
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) text = n.text;
    else if (ts.isTemplateExpression(n)) text = n.head.text + n.templateSpans.map((s) => HOLE + s.literal.text).join('');
    if (text !== undefined) out.push({ text, line: src.getLineAndCharacterOfPosition(n.getStart()).line + 1 });
    if (!ts.isImportDeclaration(n) && !ts.isExportDeclaration(n)) ts.forEachChild(n, visit);
  };
  visit(src);
  return out;
}

/** The route mentions in `text`: the method (when given) and the path, `...` spelled out. */
export function mentionsIn(text: string): { method?: string; path: string }[] {
  const out: { method?: string; path: string }[] = [];
  for (const m of text.matchAll(MENTION)) {
    let path = m[2]!.replace(/[.]+$/, '');
    if (path.startsWith('...')) path = SERVER_PREFIX + path.slice(3);
    // The Kubernetes API's own paths share the prefix; they are not ours.
    if (path.startsWith('/api/v1/namespaces')) continue;
    out.push({ ...(m[1] ? { method: m[1] } : {}), path });
  }
  return out;
}

const isParam = (seg: string) => seg.startsWith(':') || /^[{<].*[}>]$/.test(seg) || seg.includes(HOLE);

/**
 * Whether a route of the table has this path (a parameter on either side matches any segment) and
 * method; a mention without a method may also be the first segments of one (the code's prefixes).
 */
export function namesRoute(mention: { method?: string; path: string }): boolean {
  const want = mention.path.replace(/(.)\/$/, '$1').split('/');
  return Object.values(ROUTES).some((r) => {
    if (mention.method && r.method !== mention.method) return false;
    const have = r.path.split('/');
    if (mention.method ? have.length !== want.length : have.length < want.length) return false;
    return want.every((seg, i) => seg === have[i] || isParam(seg) || isParam(have[i]!));
  });
}

test('the matcher knows a route from one that is not there', () => {
  assert.deepEqual(mentionsIn('send larger files through an upload session (POST .../files/uploads).'), [{ method: 'POST', path: '/api/v1/servers/:name/files/uploads' }]);
  assert.ok(namesRoute({ method: 'POST', path: '/api/v1/servers/:name/files/uploads' }));
  assert.ok(namesRoute({ path: `/api/v1/servers/${HOLE}/files/uploads/{id}/commit` }));
  assert.ok(!namesRoute({ method: 'GET', path: '/api/v1/servers/:name/files/uploads/:id/commit' }), 'the method counts');
  assert.ok(!namesRoute({ path: '/api/v1/servers/:name/export' }));
  assert.ok(namesRoute({ path: '/api/v1/servers/:name/' }), 'a prefix of routes');
  assert.ok(!namesRoute({ method: 'POST', path: '/api/v1/servers/:name' }), 'a route, not a prefix, with a method');
  assert.deepEqual(mentionsIn('/api/v1/namespaces/x/pods'), []);
});

test('every route a string in lib/, functions/ or job/ mentions is in the route table', () => {
  const wrong: string[] = [];
  let seen = 0;
  for (const dir of ['lib', 'functions', 'job']) {
    for (const file of sourceFiles(join(ROOT, dir))) {
      for (const { text, line } of stringsOf(file)) {
        for (const m of mentionsIn(text)) {
          seen++;
          if (!namesRoute(m)) wrong.push(`${relative(ROOT, file)}:${line}: ${m.method ? `${m.method} ` : ''}${m.path.replaceAll(HOLE, '<…>')}`);
        }
      }
    }
  }
  assert.deepEqual(wrong, []);
  // The scan reads what it should: the upload's 413 names the upload session's route, at least.
  assert.ok(seen > 0);
});

test('every route the docs mention is in the route table', () => {
  const wrong: string[] = [];
  const docs = [
    join(ROOT, 'README.md'),
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(ROOT, 'docs', f)),
  ];
  for (const file of docs) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((text, i) => {
        for (const m of mentionsIn(text)) if (!namesRoute(m)) wrong.push(`${relative(ROOT, file)}:${i + 1}: ${m.method ? `${m.method} ` : ''}${m.path}`);
      });
  }
  assert.deepEqual(wrong, []);
});

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
/** A route mention: an optional method, then `.../rest` or `…/rest` (the server's routes) or `/api/v1/rest`. */
const MENTION = new RegExp(`(?:\\b(${METHODS}) )?((?:\\.\\.\\.|…|/api/v1)/[A-Za-z0-9_.:{}<>\\-/${HOLE}]*)`, 'g');
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

interface Mention {
  method?: string;
  path: string;
  /** Written `.../rest` or `…/rest`: the path is the end of a route's (`…/files/mkdir`, `…/uploads/{id}` after the route was named). */
  elided?: true;
}

/** The route mentions in `text`: the method (when given) and the path, without its `...`. */
export function mentionsIn(text: string): Mention[] {
  const out: Mention[] = [];
  for (const m of text.matchAll(MENTION)) {
    const path = m[2]!.replace(/[.]+$/, '');
    const elided = /^(\.\.\.|…)/.exec(path)?.[0];
    // The Kubernetes API's own paths share the prefix; they are not ours.
    if (path.startsWith('/api/v1/namespaces')) continue;
    out.push({ ...(m[1] ? { method: m[1] } : {}), ...(elided ? { path: path.slice(elided.length), elided: true as const } : { path }) });
  }
  return out;
}

const isParam = (seg: string) => seg.startsWith(':') || /^[{<].*[}>]$/.test(seg) || seg.includes(HOLE);

/**
 * Whether a route of the table has this path (a parameter on either side matches any segment) and
 * method. An elided mention is the last segments of one; a mention without a method may also be
 * the first segments of one (the code's prefixes).
 */
export function namesRoute(mention: Mention): boolean {
  let want = mention.path.replace(/(.)\/$/, '$1').split('/');
  // `/files/mkdir` after the elision is the segments after some segment of a route's.
  if (mention.elided) want = want.slice(1);
  return Object.values(ROUTES).some((r) => {
    if (mention.method && r.method !== mention.method) return false;
    let have = r.path.split('/');
    if (mention.elided) have = have.slice(-want.length);
    if (mention.method || mention.elided ? have.length !== want.length : have.length < want.length) return false;
    return want.every((seg, i) => seg === have[i] || isParam(seg) || isParam(have[i]!));
  });
}

test('the matcher knows a route from one that is not there', () => {
  const [upload] = mentionsIn('send larger files through an upload session (POST .../files/uploads).');
  assert.deepEqual(upload, { method: 'POST', path: '/files/uploads', elided: true });
  assert.ok(namesRoute(upload!));
  assert.ok(namesRoute(mentionsIn('`POST …/uploads/{id}/commit`')[0]!));
  assert.ok(!namesRoute(mentionsIn('use the world export (POST …/servers/:name/export)')[0]!));
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

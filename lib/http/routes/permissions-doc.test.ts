import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Permission } from '../../auth/permission.ts';
import { ROUTES } from './table.ts';

const SERVER = '/api/v1/servers/:name';

/** A route as the permission table writes it: `…` for the server's prefix, `{x}` for `:x`. */
function written(method: string, path: string): string {
  const p = path.startsWith(`${SERVER}/`) ? `…${path.slice(SERVER.length)}` : path;
  return `${method} ${p.replace(/:(\w+)/g, '{$1}')}`;
}

/** What the attribute cell of a permission says first. */
function attribute(p: Permission): RegExp {
  if (p.kind === 'server') return new RegExp(`^\`${p.verb} minecraftservers/${p.subresource}\``);
  if (p.kind === 'nonresource') return new RegExp(`^non-resource URL \`${p.path}\`, verb \`${p.verb}\``);
  return /^none\b/;
}

/** The rows of docs/permissions.md's permission table: the routes of each row, and its attribute cell. */
function permissionTable(): { routes: string[]; attribute: string }[] {
  const page = readFileSync(new URL('../../../docs/permissions.md', import.meta.url), 'utf8');
  const section = page.slice(page.indexOf('## The permission table'));
  const table = section.slice(section.indexOf('| Route | Attribute'), section.indexOf('\n\n', section.indexOf('| Route | Attribute')));
  return table
    .split('\n')
    .slice(2)
    .map((line) => {
      const [routes, attr] = line.split(' | ').map((c) => c.replace(/^\| |\s\|$/g, '').trim());
      return { routes: [...routes!.matchAll(/`((?:GET|PUT|POST|DELETE) [^`]+)`/g)].map((m) => m[1]!), attribute: attr! };
    });
}

test("docs/permissions.md's permission table lists every route of the route table once, beside its own permission", () => {
  const rows = permissionTable();
  assert.ok(rows.length >= 5, 'the table was found');
  for (const [id, r] of Object.entries(ROUTES)) {
    const route = written(r.method, r.path);
    const holding = rows.filter((row) => row.routes.includes(route));
    assert.equal(holding.length, 1, `${id} (\`${route}\`) is listed ${holding.length} times in docs/permissions.md`);
    assert.match(holding[0]!.attribute, attribute(r.permission), `${id} (\`${route}\`) sits beside the wrong permission`);
  }
});

test('the permission table names no route the route table does not have', () => {
  const known = new Set(Object.values(ROUTES).map((r) => written(r.method, r.path)));
  for (const row of permissionTable()) for (const route of row.routes) assert.ok(known.has(route), `docs/permissions.md lists \`${route}\`, which no route is`);
});

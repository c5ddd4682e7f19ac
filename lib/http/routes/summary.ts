/**
 * The README's route summary, from the route table: one line per route with its function, method
 * and path (with its query and body fields), permission, event type and answer. Written between
 * the `<!-- routes:begin -->` and `<!-- routes:end -->` markers by `npm run openapi`.
 * @module
 */
import type { $ZodType } from 'zod/v4/core';
import type { Permission } from '../../auth/permission.ts';
import * as z from '../../schema.ts';
import { descriptionOf } from '../../schema.ts';
import { openapiPath } from './openapi.ts';
import type { DocTables, RouteTable } from './types.ts';

export const BEGIN = '<!-- routes:begin -->';
export const END = '<!-- routes:end -->';

/**
 * A body's or query's fields, `?` on the optional ones. A field the route checks itself (to answer
 * its own code) is optional to the schema; its description says "(required" and so does the summary.
 */
function fields(shape: Record<string, $ZodType>): string[] {
  return Object.entries(shape).map(([k, s]) => (z.safeParse(s, undefined).success && !/\(required/.test(descriptionOf(s) ?? '') ? `${k}?` : k));
}

function permission(p: Permission): string {
  if (p.kind === 'public') return 'none (signed URL)';
  if (p.kind === 'nonresource') return `${p.verb} ${p.path}`;
  return `${p.verb} ${p.subresource}`;
}

/** The markdown table, without the markers. */
export function routeSummary<T extends RouteTable>(tables: DocTables<T>): string {
  const lines = ['| Function | Route | Permission | Event | Success |', '| --- | --- | --- | --- | --- |'];
  for (const [id, e] of Object.entries(tables.routes)) {
    const s = tables.schemas[id]!;
    const query = s.query
      ? fields(s.query._zod.def.shape)
          .map((k) => `${k.replace('?', '')}=`)
          .join('&')
      : '';
    let route = `\`${e.method} ${openapiPath(e.path)}${query ? `?${query}` : ''}\``;
    if (s.body && 'json' in s.body) {
      const shape = (s.body.json._zod.def as { shape?: Record<string, $ZodType> }).shape;
      route += ` body \`{${shape ? fields(shape).join(', ') : '…'}}\``;
    } else if (s.body) route += ' raw body';
    lines.push(`| ${e.fn} | ${route} | ${permission(e.permission)} | ${e.event ? `\`${e.event.type}\`` : '—'} | ${tables.prose[id]!.answer} |`);
  }
  return lines.join('\n');
}

/** `readme` with the block between the markers replaced; throws when the markers are missing. */
export function withSummary(readme: string, summary: string): string {
  const b = readme.indexOf(BEGIN);
  const e = readme.indexOf(END);
  if (b < 0 || e < b) throw new Error(`README.md needs the ${BEGIN} and ${END} markers`);
  return `${readme.slice(0, b + BEGIN.length)}\n${summary}\n${readme.slice(e)}`;
}

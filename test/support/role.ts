/** The calls knative/rbac.yaml grants, as `<verb> <resource>` strings (the cluster's count keys). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { ROOT } from './stack.ts';

interface Rule {
  verbs: string[];
  resources: string[];
}

export function roleGrants(path = join(ROOT, 'knative/rbac.yaml')): Set<string> {
  const out = new Set<string>();
  for (const doc of loadAll(readFileSync(path, 'utf8')) as { kind?: string; rules?: Rule[] }[]) {
    if (doc?.kind !== 'Role') continue;
    for (const r of doc.rules ?? []) for (const v of r.verbs) for (const res of r.resources) out.add(`${v} ${res}`);
  }
  return out;
}

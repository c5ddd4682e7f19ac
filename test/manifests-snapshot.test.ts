/**
 * What `kubectl apply -k knative/` sends, field by field, against a checked-in snapshot
 * (test/snapshots/knative.yaml): the render with every component, objects sorted by apiVersion,
 * kind, namespace and name, keys sorted (list order kept: it matters in env, rules, containers).
 * The default render must be those objects less the ones only the optional components add. So a
 * change to how knative/ is written (a base, a component, a replacement) that moves a rendered
 * field fails here, and a change meant to move one shows as the snapshot's diff. To take a change
 * on purpose: `FELIS_UPDATE_SNAPSHOT=1 node --test test/manifests-snapshot.test.ts`, then read
 * `git diff test/snapshots/knative.yaml`.
 */

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { dump } from 'js-yaml';
import { type Obj, renderAsync } from './support/kustomize.ts';
import { ROOT } from './support/stack.ts';

const DIR = join(ROOT, 'knative');
const SNAPSHOT = join(ROOT, 'test/snapshots/knative.yaml');
const COMPONENTS = ['eventing', 'kubernetes-auth', 'admission-policy', 'crd'];
/** The kinds only the components off by default add (kubernetes-auth, admission-policy, crd). */
const NOT_IN_DEFAULT = new Set(['ClusterRoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'CustomResourceDefinition']);

const id = (o: Obj) => [o.apiVersion, o.kind, o.metadata.namespace ?? '', o.metadata.name].join(' ');
/** One YAML document per object, in a stable order, keys sorted. */
const normalize = (objs: Obj[]) =>
  [...objs]
    .sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0))
    .map((o) => dump(o, { sortKeys: true, lineWidth: -1, noRefs: true }))
    .join('---\n');

const [all, byDefault] = await Promise.all([renderAsync(DIR, { components: COMPONENTS }), renderAsync(DIR)]);

test('knative/ with every component renders exactly the snapshot', () => {
  const text = normalize(all);
  if (process.env.FELIS_UPDATE_SNAPSHOT === '1') writeFileSync(SNAPSHOT, text);
  assert.equal(text, readFileSync(SNAPSHOT, 'utf8'), 'the render moved from test/snapshots/knative.yaml (FELIS_UPDATE_SNAPSHOT=1 takes it, see the header)');
});

test('the default render is the snapshot less what the optional components add', () => {
  assert.equal(normalize(byDefault), normalize(all.filter((o) => !NOT_IN_DEFAULT.has(o.kind))));
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ROUTES } from '../lib/http/routes/table.ts';
import { render } from './support/kustomize.ts';

const DIR = fileURLToPath(new URL('../knative/', import.meta.url));

/** The functions that have a Knative Service `felis-world-<fn>` in `objs`. */
function services(objs: ReturnType<typeof render>): string[] {
  return objs
    .filter((o) => o.apiVersion === 'serving.knative.dev/v1' && o.kind === 'Service' && o.metadata.name.startsWith('felis-world-'))
    .map((o) => o.metadata.name.slice('felis-world-'.length))
    .sort();
}

test('every function the route table names has its Knative Service, and every Service serves routes of the table', () => {
  const fns = [...new Set(Object.values(ROUTES).map((r) => r.fn))].sort();
  assert.deepEqual(services(render(DIR)), fns);
});

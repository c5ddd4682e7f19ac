/**
 * What persistence costs one store write: N optimistic updates of one object through the registry,
 * in memory and with `cluster.sqlite` (WAL, synchronous=FULL: one fsync per commit).
 *
 *   ./node_modules/.bin/node cluster/persist-bench.ts [N]
 *
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { minecraftServers } from './kinds/custom.ts';
import { PersistentState } from './persist.ts';
import { Registry } from './registry.ts';
import { Store } from './store.ts';

const n = Number(process.argv[2] ?? 500);
for (const persist of [false, true]) {
  const dir = mkdtempSync(join(tmpdir(), 'felis-persist-bench-'));
  const state = persist ? PersistentState.open(dir) : undefined;
  try {
    const registry = new Registry(new Store(['minecraft'], state), [minecraftServers]);
    const def = registry.byResource('minecraftservers');
    registry.create(def, 'minecraft', {
      apiVersion: 'felis.lolicon.best/v1alpha1',
      kind: 'MinecraftServer',
      metadata: { name: 'bench' },
      spec: { desiredState: 'Stopped' },
    });
    const t = performance.now();
    for (let i = 0; i < n; i++) {
      registry.update(def, 'minecraft', 'bench', (cur) => {
        cur.metadata.annotations = { 'bench/i': String(i) };
        return cur;
      });
    }
    const each = (performance.now() - t) / n;
    console.log(`${persist ? 'cluster.sqlite' : 'in memory     '}: ${each.toFixed(3)} ms per write (${n} writes)`);
  } finally {
    state?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

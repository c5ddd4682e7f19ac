/**
 * The demo server `survival` that `npm start` seeds under FELIS_DATA/worlds/: enough of a Paper
 * server's tree to try every file route, including the two guarded files.
 */
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, type KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

/** The folder is absent or holds nothing: the only case in which the demo world may be written. */
function absentOrEmpty(dir: string): boolean {
  try {
    return readdirSync(dir).length === 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
}

/**
 * Creates the demo world only when its folder is missing or empty. An existing world is never
 * written, whatever is missing from it: a player's world is worth more than a demo. The tree is
 * built in a staging folder beside it and renamed into place, so a crash leaves either no world or
 * the whole demo, never half of one.
 */
export function seedDemoWorld(dataDir: string, server = 'survival'): string {
  const worlds = join(dataDir, 'worlds');
  const dir = join(worlds, server);
  if (!absentOrEmpty(dir)) return dir;
  mkdirSync(worlds, { recursive: true });
  // A staging folder left by a crash during an earlier seed is dropped, never used.
  for (const e of readdirSync(worlds)) if (e.startsWith(`.seed-${server}-`)) rmSync(join(worlds, e), { recursive: true, force: true });
  const staging = join(worlds, `.seed-${server}-${process.pid}`);
  for (const d of ['config', 'plugins', 'world/region']) mkdirSync(join(staging, d), { recursive: true });
  writeFileSync(join(staging, 'server.properties'), 'motd=A Felis demo server\nmax-players=20\nrcon.password=hunter2-change-me\nenable-rcon=true\nview-distance=10\n');
  writeFileSync(join(staging, 'config/paper-global.yml'), 'proxies:\n  velocity:\n    enabled: true\n    secret: "not-for-your-eyes"\n');
  writeFileSync(join(staging, 'config/paper-world-defaults.yml'), 'entities:\n  spawning:\n    monster-spawn-range: 8\n');
  writeFileSync(join(staging, 'plugins/README.txt'), 'Drop plugin jars here.\n');
  writeFileSync(join(staging, 'world/level.dat'), Buffer.from([0x1f, 0x8b, 0x08, 0x00]));
  writeFileSync(join(staging, 'eula.txt'), 'eula=true\n');
  // rename(2) replaces an empty directory atomically; a non-empty one (someone just wrote a world
  // there) makes it fail, and then the staging copy is dropped rather than anything overwritten.
  try {
    renameSync(staging, dir);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
  }
  return dir;
}

/**
 * The demo server's cluster side, as Felis's operator would leave a stopped server: a
 * MinecraftServer (desired Stopped, phase Stopped, not ready) and its world claim. Only what is
 * absent is created: an existing server keeps its spec, status, annotations (locks) and claim.
 */
export async function seedDemoServer(admin: KubeConfig, name = 'survival', namespace = 'minecraft'): Promise<void> {
  const custom = admin.makeApiClient(CustomObjectsApi);
  const core = admin.makeApiClient(CoreV1Api);
  const mc = { group: 'felis.lolicon.best', version: 'v1alpha1', namespace, plural: 'minecraftservers' };
  const exists = (err: unknown) => (err as { code?: number }).code === 409;
  await custom
    .createNamespacedCustomObject({ ...mc, body: { apiVersion: 'felis.lolicon.best/v1alpha1', kind: 'MinecraftServer', metadata: { name }, spec: { desiredState: 'Stopped' } } })
    .catch((err) => {
      if (!exists(err)) throw err;
    });
  // A status is set only on a server that has none yet (a crash may have come between the two).
  const current = (await custom.getNamespacedCustomObject({ ...mc, name })) as { status?: { phase?: string } };
  if (!current.status?.phase) {
    await custom.patchNamespacedCustomObjectStatus({ ...mc, name, body: { status: { phase: 'Stopped', ready: false } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  }
  await core
    .createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: `world-${name}-0`, labels: { 'felis.lolicon.best/server': name } },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } } },
      },
    })
    .catch((err) => {
      if (!exists(err)) throw err;
    });
}

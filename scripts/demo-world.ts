/**
 * The demo server `survival` that `npm start` seeds under FELIS_DATA/worlds/: enough of a Paper
 * server's tree to try every file route, including the two guarded files.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';

export function seedDemoWorld(dataDir: string, server = 'survival'): string {
  const dir = join(dataDir, 'worlds', server);
  if (existsSync(join(dir, 'server.properties'))) return dir;
  for (const d of ['config', 'plugins', 'world/region']) mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(
    join(dir, 'server.properties'),
    'motd=A Felis demo server\nmax-players=20\nrcon.password=hunter2-change-me\nenable-rcon=true\nview-distance=10\n',
  );
  writeFileSync(
    join(dir, 'config/paper-global.yml'),
    'proxies:\n  velocity:\n    enabled: true\n    secret: "not-for-your-eyes"\n',
  );
  writeFileSync(join(dir, 'config/paper-world-defaults.yml'), 'entities:\n  spawning:\n    monster-spawn-range: 8\n');
  writeFileSync(join(dir, 'plugins/README.txt'), 'Drop plugin jars here.\n');
  writeFileSync(join(dir, 'world/level.dat'), Buffer.from([0x1f, 0x8b, 0x08, 0x00]));
  writeFileSync(join(dir, 'eula.txt'), 'eula=true\n');
  return dir;
}

/**
 * The demo server's cluster side, as Felis's operator would leave a stopped server: a
 * MinecraftServer (desired Stopped, phase Stopped, not ready) and its world claim. Idempotent.
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
  await custom.patchNamespacedCustomObjectStatus(
    { ...mc, name, body: { status: { phase: 'Stopped', ready: false } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
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

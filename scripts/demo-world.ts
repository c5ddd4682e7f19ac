/**
 * The demo server `survival` that `npm start` seeds under FELIS_DATA/worlds/: enough of a Paper
 * server's tree to try every file route, including the two guarded files, a real gzip NBT
 * level.dat (made by the nbt route's own encoder) and a logs/ folder with a gzip log.
 */
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { CoreV1Api, CustomObjectsApi, type KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { compressNbt, encodeNbt } from '../functions/files-nbt/nbt-encode.ts';
import type { NbtRoot } from '../functions/files-nbt/op.ts';

const int = (value: number) => ({ type: 'int' as const, value });
const byte = (value: number) => ({ type: 'byte' as const, value });
const long = (value: bigint) => ({ type: 'long' as const, value: String(value) });
const str = (value: string) => ({ type: 'string' as const, value });

/** The demo's level.dat: the Data compound a 1.21 server writes, cut down to what a panel shows. */
export function demoLevel(): NbtRoot {
  return {
    type: 'compound',
    name: '',
    value: {
      Data: {
        type: 'compound',
        value: {
          DataVersion: int(3953),
          LevelName: str('Survival'),
          version: int(19133),
          Version: { type: 'compound', value: { Id: int(3953), Name: str('1.21'), Series: str('main'), Snapshot: byte(0) } },
          ServerBrands: { type: 'list', value: { type: 'string', value: ['Paper'] } },
          WasModded: byte(0),
          Time: long(1_234_567n),
          DayTime: long(6_000n),
          LastPlayed: long(1_764_547_200_000n),
          GameType: int(0),
          Difficulty: byte(2),
          hardcore: byte(0),
          allowCommands: byte(0),
          initialized: byte(1),
          SpawnX: int(0),
          SpawnY: int(64),
          SpawnZ: int(0),
          SpawnAngle: { type: 'float', value: 0 },
          GameRules: { type: 'compound', value: { doDaylightCycle: str('true'), keepInventory: str('false'), randomTickSpeed: str('3') } },
        },
      },
    },
  };
}

const LOG_LINES = [
  '[10:00:00] [ServerMain/INFO]: Environment: Environment[sessionHost=https://sessionserver.mojang.com]',
  '[10:00:02] [Server thread/INFO]: Starting minecraft server version 1.21',
  '[10:00:02] [Server thread/INFO]: Preparing level "world"',
  '[10:00:05] [Server thread/INFO]: Done (3.102s)! For help, type "help"',
];

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
  for (const d of ['config', 'logs', 'plugins', 'world/region']) mkdirSync(join(staging, d), { recursive: true });
  writeFileSync(join(staging, 'server.properties'), 'motd=A Felis demo server\nmax-players=20\nrcon.password=hunter2-change-me\nenable-rcon=true\nview-distance=10\n');
  writeFileSync(join(staging, 'config/paper-global.yml'), 'proxies:\n  velocity:\n    enabled: true\n    secret: "not-for-your-eyes"\n');
  writeFileSync(join(staging, 'config/paper-world-defaults.yml'), 'entities:\n  spawning:\n    monster-spawn-range: 8\n');
  writeFileSync(join(staging, 'plugins/README.txt'), 'Drop plugin jars here.\n');
  // Written by the project's own encoder, gzip as the game writes it: the nbt route reads it as is.
  writeFileSync(join(staging, 'world/level.dat'), compressNbt(encodeNbt(demoLevel()), 'gzip'));
  writeFileSync(join(staging, 'logs/latest.log'), `${LOG_LINES.join('\n')}\n`);
  writeFileSync(join(staging, 'logs/2026-12-01-1.log.gz'), gzipSync(`${LOG_LINES.slice(0, 2).join('\n')}\n[10:30:00] [Server thread/INFO]: Stopping server\n`));
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

/**
 * NBT files the tests and the bench make, written by prismarine-nbt (an encoder apart from ours,
 * so a round trip through ours is checked against bytes it did not make): a level.dat-shaped and a
 * playerdata-shaped document, and their gzip, zlib and bare forms.
 * @module
 */
import zlib from 'node:zlib';
import nbt from 'prismarine-nbt';

const byte = (value: number) => ({ type: 'byte', value });
const int = (value: number) => ({ type: 'int', value });
const str = (value: string) => ({ type: 'string', value });
const dbl = (value: number) => ({ type: 'double', value });
const flt = (value: number) => ({ type: 'float', value });
/** A long as prismarine spells it, [high, low] 32-bit halves, from a bigint. */
const long = (v: bigint) => ({ type: 'long', value: [Number(BigInt.asIntN(32, v >> 32n)), Number(BigInt.asIntN(32, v))] });
const compound = (value: Record<string, unknown>) => ({ type: 'compound', value });
const list = (type: string, value: unknown[]) => ({ type: 'list', value: { type, value } });

/** level.dat as 1.21 writes it, cut down: every kind of tag the game puts there. */
export function levelDoc(extraRules = 0): unknown {
  const rules: Record<string, unknown> = { doDaylightCycle: str('true'), keepInventory: str('false'), randomTickSpeed: str('3') };
  for (let i = 0; i < extraRules; i++) rules[`customRule${i}`] = str(`value-${i}-${'x'.repeat(i % 40)}`);
  return {
    type: 'compound',
    name: '',
    value: {
      Data: compound({
        DataVersion: int(3953),
        LevelName: str('Felis Survival'),
        Time: long(123456789012n),
        DayTime: long(6000n),
        LastPlayed: long(1765100000000n),
        GameType: int(0),
        Difficulty: byte(2),
        hardcore: byte(0),
        allowCommands: byte(1),
        BorderCenterX: dbl(0),
        BorderSize: dbl(59999968),
        BorderDamagePerBlock: dbl(0.2),
        SpawnX: int(-112),
        SpawnY: int(64),
        SpawnZ: int(208),
        SpawnAngle: flt(0),
        rainTime: int(98765),
        ServerBrands: list('string', [str('Paper').value]),
        ScheduledEvents: list('end', []),
        DataPacks: compound({ Enabled: list('string', ['vanilla', 'file/felis']), Disabled: list('string', []) }),
        GameRules: compound(rules),
        Version: compound({ Id: int(3953), Name: str('1.21'), Series: str('main'), Snapshot: byte(0) }),
        WorldGenSettings: compound({
          seed: long(-4172144997902289642n),
          generate_features: byte(1),
          bonus_chest: byte(0),
          dimensions: compound({ 'minecraft:overworld': compound({ type: str('minecraft:overworld') }) }),
        }),
        CustomBossEvents: compound({}),
        DragonFight: compound({ Gateways: { type: 'intArray', value: [12, 5, 3, 0, 19] }, DragonKilled: byte(1) }),
        WanderingTraderId: { type: 'intArray', value: [-1, 2147483647, -2147483648, 7] },
        BiomeFlags: { type: 'byteArray', value: [0, 1, -128, 127] },
        Timestamps: { type: 'longArray', value: [long(-(1n << 63n)).value, long((1n << 63n) - 1n).value, long(0n).value] },
      }),
    },
  };
}

/** A player's file (playerdata/<uuid>.dat), cut down: lists of doubles, floats and compounds. */
export function playerDoc(): unknown {
  const item = (slot: number, id: string, count: number) => ({ Slot: byte(slot), id: str(id), count: int(count) });
  return {
    type: 'compound',
    name: '',
    value: {
      DataVersion: int(3953),
      UUID: { type: 'intArray', value: [1122334455, -99887766, 5544, -1] },
      Pos: list('double', [12.5, 64, -1022.300000000001]),
      Motion: list('double', [0, -0.0784000015258789, 0]),
      Rotation: list('float', [Math.fround(181.5), Math.fround(-12.25)]),
      Health: flt(Math.fround(17.5)),
      FallDistance: flt(0),
      Inventory: list('compound', [item(0, 'minecraft:diamond_sword', 1), item(1, 'minecraft:cooked_beef', 47), item(100, 'minecraft:iron_boots', 1)]),
      EnderItems: list('compound', []),
      Attributes: list('compound', [{ id: str('minecraft:generic.max_health'), base: dbl(20), modifiers: list('end', []) }]),
      recipeBook: compound({ recipes: list('string', ['minecraft:crafting_table', 'minecraft:torch']), toBeDisplayed: list('string', []) }),
      abilities: compound({ flying: byte(0), flySpeed: flt(Math.fround(0.05)), walkSpeed: flt(Math.fround(0.1)), mayBuild: byte(1) }),
      XpLevel: int(30),
      XpTotal: int(1395),
      seenCredits: byte(0),
      Dimension: str('minecraft:overworld'),
      playerGameType: int(0),
      foodSaturationLevel: flt(Math.fround(5.5)),
      'bukkit:lastKnownName': str('Steve'),
      Paper: compound({ LastLogin: long(1765099000000n), OriginWorld: { type: 'intArray', value: [1, 2, 3, 4] } }),
    },
  };
}

/** The bare NBT of a prismarine document. */
export function payloadOf(doc: unknown): Buffer {
  return nbt.writeUncompressed(doc as never, 'big');
}

/** A file's bytes in each compression the route answers. */
export function fileOf(payload: Buffer, compression: 'gzip' | 'zlib' | 'none'): Buffer {
  return compression === 'gzip' ? zlib.gzipSync(payload) : compression === 'zlib' ? zlib.deflateSync(payload) : payload;
}

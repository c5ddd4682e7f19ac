/** files-nbt's end-to-end scenarios, `rbac` and `container` (test/support/function-e2e.ts says what each is for). @module */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { type ContainerCall, interruptedExtraction, q, type RbacScenario, type Setup, suiteDir } from '../../test/support/function-e2e.ts';
import { fileOf, levelDoc, payloadOf } from './fixtures.test-kit.ts';
import { decodeNbt } from './job/nbt-decode.ts';

/** A level.dat the tests make (prismarine-nbt's bytes, not the demo world's): its bytes, digest, and the root with its name changed. */
const FILE = fileOf(payloadOf(levelDoc()), 'gzip');
const SHA = createHash('sha256').update(FILE).digest('hex');
const PATH = 'world/nbt-level.dat';
const renamed = (name: string) => {
  const root = JSON.parse(JSON.stringify(decodeNbt(payloadOf(levelDoc()))));
  root.value.Data.value.LevelName.value = name;
  return root;
};
const place = (world: string) => {
  mkdirSync(join(world, 'world'), { recursive: true });
  writeFileSync(join(world, PATH), FILE);
};

// A read, then a write (its lock, its read Job and its write Job, which first finds an
// interrupted extraction to recover and record).
const setup: Setup = async (c, tag) => {
  place(join(suiteDir, 'worlds', 'survival'));
  await interruptedExtraction(c, tag);
};
export const rbac: RbacScenario = {
  setup,
  calls: [
    ['GET', `/api/v1/servers/survival/files/nbt?path=${q(PATH)}`],
    ['PUT', `/api/v1/servers/survival/files/nbt?path=${q(PATH)}`, { root: renamed('rbac'), expect_sha256: SHA }],
  ],
};

export const container: ContainerCall[] = [
  {
    method: 'GET',
    path: `/api/v1/servers/survival/files/nbt?path=${q(PATH)}`,
    setup: async (s) => place(s.world),
    status: [200],
    check: (b) => assert.ok(b.compression === 'gzip' && b.sha256 === SHA && b.root.value.Data.value.LevelName.value === 'Felis Survival', JSON.stringify(b).slice(0, 500)),
  },
  {
    method: 'PUT',
    path: `/api/v1/servers/survival/files/nbt?path=${q(PATH)}`,
    body: { root: renamed('from a container'), expect_sha256: SHA },
    status: [200],
    check: (b, s) => {
      assert.equal(b.status, 'written');
      assert.ok(gunzipSync(readFileSync(join(s.world, PATH))).includes(Buffer.from('from a container')));
    },
  },
];

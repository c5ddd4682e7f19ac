/**
 * Test helper (never shipped): the hostile-entry suite, one table for every archive format. Each
 * case is a list of entries (forged as a tar, which can say anything) and the refusal the
 * extraction must give; a format's forger turns the entries into its own archive, and the runner
 * registers one test per case the format can carry (a zip cannot store a device, a 7z no pax
 * record). Every refusal must leave the world and its surroundings exactly as they were.
 *
 * @module
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { makeWorld } from '../test-support.ts';
import { refused } from '../ops/unzip-test-kit.ts';
import type { ForgedTar } from './test-kit.ts';

/** What a format must be able to store for a case to apply to it. */
export type Carried = 'symlink' | 'hardlink' | 'special' | 'raw-name' | 'pax' | 'dir-entry';

export interface HostileCase {
  title: string;
  entries: ForgedTar[];
  code: 'archive_unsafe' | 'archive_symlink' | 'archive_invalid';
  /** The refusal's `entry`, when it names one. */
  entry?: string;
  /** What the refusal's message must say. */
  error?: RegExp;
  /** What the format must store to carry the case (none: every format). */
  needs?: readonly Carried[];
}

const fine: ForgedTar = { name: 'fine.txt', data: 'ok' };
const slip = (name: string | Buffer, entry: string, needs?: Carried[]): HostileCase => ({
  title: `slip: ${JSON.stringify(String(name))}`,
  entries: [fine, { name, data: 'evil' }],
  code: 'archive_unsafe',
  entry,
  error: /leads outside the folder/,
  ...(needs ? { needs } : {}),
});

export const HOSTILE_CASES: readonly HostileCase[] = [
  slip('../evil.txt', '../evil.txt'),
  slip('a/../../evil.txt', 'a/../../evil.txt'),
  slip('..\\evil.txt', '../evil.txt', ['raw-name']),
  slip('./../evil.txt', './../evil.txt', ['raw-name']),
  slip('/etc/cron.d/evil', '/etc/cron.d/evil', ['raw-name']),
  slip('\\evil.txt', '/evil.txt', ['raw-name']),
  slip('C:/evil.txt', 'C:/evil.txt', ['raw-name']),
  slip('c:evil.txt', 'c:evil.txt', ['raw-name']),
  {
    title: 'a pax path that slips out is judged under the pax name',
    entries: [{ name: 'innocent.txt', paxPath: '../../evil.txt', data: 'x' }],
    code: 'archive_unsafe',
    entry: '../../evil.txt',
    needs: ['pax'],
  },
  { title: 'a NUL inside a name', entries: [{ name: 'x', paxPath: 'nul\0.txt', data: 'x' }], code: 'archive_unsafe', needs: ['pax'] },
  { title: 'a file named for the destination itself (a/..)', entries: [{ name: 'a/..', data: 'x' }], code: 'archive_unsafe', needs: ['raw-name'] },
  {
    title: "an entry under the editor's working names",
    entries: [{ name: 'x/.felis-unzip-0123456789ab/new/a', data: 'x' }],
    code: 'archive_unsafe',
    error: /reserved for the editor's working files/,
  },
  {
    title: 'a symbolic link leading out',
    entries: [fine, { name: 'odd', type: '2', linkname: '../outside/secret.txt' }],
    code: 'archive_symlink',
    entry: 'odd',
    error: /symbolic link/,
    needs: ['symlink'],
  },
  {
    title: 'a hard link leading out',
    entries: [fine, { name: 'hard', type: '1', linkname: '../outside/secret.txt' }],
    code: 'archive_unsafe',
    entry: 'hard',
    error: /hard link/,
    needs: ['hardlink'],
  },
  {
    title: 'a hard link inside',
    entries: [fine, { name: 'hard2', type: '1', linkname: 'fine.txt' }],
    code: 'archive_unsafe',
    entry: 'hard2',
    error: /hard link/,
    needs: ['hardlink'],
  },
  { title: 'a character device', entries: [fine, { name: 'dev/tty', type: '3' }], code: 'archive_unsafe', entry: 'dev/tty', error: /not a regular file/, needs: ['special'] },
  { title: 'a block device', entries: [fine, { name: 'dev/sda', type: '4' }], code: 'archive_unsafe', entry: 'dev/sda', error: /not a regular file/, needs: ['special'] },
  { title: 'a FIFO', entries: [fine, { name: 'fifo', type: '6' }], code: 'archive_unsafe', entry: 'fifo', error: /not a regular file/, needs: ['special'] },
  {
    title: 'a GNU sparse file',
    entries: [fine, { name: 'sparse', type: 'S', data: 'x' }],
    code: 'archive_unsafe',
    entry: 'sparse',
    error: /not a regular file/,
    needs: ['special'],
  },
  {
    title: 'a file named twice',
    entries: [{ name: 'a.txt', data: '1' }, fine, { name: 'a.txt', data: '2' }],
    code: 'archive_invalid',
    entry: 'a.txt',
    error: /appears in the archive twice/,
  },
  {
    title: 'a name that is both a file and a folder',
    entries: [{ name: 'x', data: '1' }, { name: 'x/y', data: '2' }],
    code: 'archive_invalid',
    entry: 'x',
    error: /both a file and a folder/,
  },
  {
    title: 'nothing to extract',
    entries: [{ name: '__MACOSX/._a', data: 'x' }],
    code: 'archive_invalid',
    error: /nothing to extract/,
  },
];

/**
 * Registers one test per case `carries` allows, each extracting `h<ending>` made by `forge` in a
 * fresh world and asserting the refusal, its entry and message, and that nothing changed.
 */
export function hostileSuite(
  format: string,
  ending: string,
  forge: (entries: ForgedTar[]) => Promise<Buffer> | Buffer,
  carries: ReadonlySet<string>,
): void {
  for (const c of HOSTILE_CASES) {
    if (!(c.needs ?? []).every((n) => carries.has(n))) continue;
    test(`${format}: ${c.title} → ${c.code}; nothing changes`, async () => {
      const w = makeWorld();
      const rel = `h${ending}`;
      fs.writeFileSync(w.p(rel), await forge(c.entries));
      const r = await refused(w, rel);
      assert.equal(r.code, c.code, JSON.stringify(r));
      if (c.entry !== undefined) assert.equal(r.entry, c.entry);
      if (c.error) assert.match(r.error!, c.error);
    });
  }
}

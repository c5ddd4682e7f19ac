/**
 * Test helper (never shipped): the hostile-entry suite, one table for every archive format. Each
 * case is a list of entries (forged as a tar, which can say anything) and the refusal the
 * extraction must give; a format's forger turns the entries into its own archive (a `paxPath` is
 * the entry's name where the format has no pax record), and the runner registers one test per case
 * the format can carry (a zip cannot store a hard link, a 7z no pax record). Every refusal must
 * leave the world and its surroundings exactly as they were.
 *
 * @module
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { refused } from '../../functions/files-unzip/job/unzip.test-kit.ts';
import { makeWorld } from '../testing/world.ts';
import { type ForgedTar, forgeZip } from './forge.test-kit.ts';

/**
 * What a format must be able to store for a case to apply to it. `nul-name`: a NUL inside a name,
 * which a zip's, a RAR's or a tar's pax record can hold, and a 7z cannot (its names are UTF-16
 * strings that end at a NUL: a NUL inside one makes the listing unreadable, not a name).
 */
export type Carried = 'symlink' | 'hardlink' | 'special' | 'raw-name' | 'pax' | 'dir-entry' | 'nul-name';

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
/** `d/<300 bytes>.txt`: one name part longer than NAME_MAX (255 bytes). */
const LONG_PART = `d/${'n'.repeat(300)}.txt`;
/** 21 parts of 200 bytes and a file name: 4,226 bytes, over PATH_MAX (4096) though every part fits. */
const LONG_PATH = `${Array.from({ length: 21 }, (_, i) => String(i).padStart(2, '0').padEnd(200, 'p')).join('/')}/x.txt`;
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
  {
    title: 'a NUL inside a name',
    entries: [fine, { name: 'x', paxPath: 'nul\0.txt', data: 'x' }],
    code: 'archive_unsafe',
    entry: 'nul\0.txt',
    error: /NUL byte/,
    needs: ['nul-name'],
  },
  {
    title: 'a name part of 300 bytes, more than a file name can hold',
    entries: [fine, { name: 'long.txt', paxPath: LONG_PART, data: 'x' }],
    code: 'archive_unsafe',
    entry: LONG_PART,
    error: /has a name of 304 bytes; a file or folder name has at most 255/,
  },
  {
    title: 'a path of over 4096 bytes, every part of it a name a file can have',
    entries: [fine, { name: 'deep.txt', paxPath: LONG_PATH, data: 'x' }],
    code: 'archive_unsafe',
    entry: LONG_PATH,
    error: /has a path of 4\d{3} bytes; extracted here a path has at most 40\d\d/,
  },
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
    entries: [
      { name: 'x', data: '1' },
      { name: 'x/y', data: '2' },
    ],
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

const S_IFMT = 0o170000;
const ZIP_TYPES: Record<string, number> = { '0': 0o100000, '2': 0o120000, '3': 0o020000, '4': 0o060000, '6': 0o010000 };

/**
 * The suite's entries as a zip (test-kit.ts `forgeZip`): a pax path is the name, a symlink's target
 * its data, a device or FIFO its Unix mode. A hard link or a GNU sparse file has no zip form.
 */
export function forgeZipEntries(entries: ForgedTar[]): Buffer {
  return forgeZip(
    entries.map((e) => {
      const type = e.type ?? '0';
      const name = Buffer.isBuffer(e.name) ? e.name : Buffer.from(e.paxPath ?? e.name, 'utf8');
      if (type === '5') return { name: name[name.length - 1] === 0x2f ? name : Buffer.concat([name, Buffer.from('/')]) };
      const fmt = ZIP_TYPES[type];
      if (fmt === undefined) throw new Error(`a tar entry of type ${type} has no zip form`);
      const mode = e.mode !== undefined && (e.mode & S_IFMT) !== 0 ? e.mode : fmt | (e.mode ?? (type === '2' ? 0o777 : 0o644));
      return { name, mode, data: type === '2' ? (e.linkname ?? '') : e.data, ...(e.declaredSize !== undefined ? { declaredSize: e.declaredSize } : {}) };
    }),
  );
}

/**
 * Registers one test per case `carries` allows, each extracting `h<ending>` made by `forge` in a
 * fresh world and asserting the refusal, its entry and message, and that nothing changed.
 */
export function hostileSuite(format: string, ending: string, forge: (entries: ForgedTar[]) => Promise<Buffer> | Buffer, carries: ReadonlySet<string>): void {
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

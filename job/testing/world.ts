/**
 * Test fixtures for the Job's tests (not shipped: nothing in main.ts imports it). A world like the
 * Go tests' one, on a real temp directory, with an "outside" directory beside it holding things a
 * resolution must never reach.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import type { Result } from '../../lib/protocol/result.ts';
import { DEFAULT_TRASH_SECONDS, type TrashSettings } from '../../lib/protocol/trash-env.ts';
import { type ExecuteOptions, execute, type OpCall, type OpRequestOf } from '../dispatch/execute.ts';
import { LEDGER_DIR } from '../runtime/withheld.ts';

export interface World {
  /** Temp base holding `root` and `outside`. */
  base: string;
  root: string;
  outside: string;
  /** Absolute path of a file inside the root. */
  p: (rel: string) => string;
  /** Runs one op against this world. */
  run: (req: OpCall, opts?: ExecuteOptions) => Promise<Result>;
}

export const SECRET_TEXT = 'forwarding-secret-XYZZY\n';
export const OUTSIDE_TEXT = 'outside-secret\n';
export const PROPS = 'motd=hi\nrcon.password=hunter2\nserver-port=25565\n';

/** A fresh world: server.properties, config/{paper.yml,paper-global.yml}, and outside/secret.txt. */
export function makeWorld(): World {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-job-'));
  after(() => fs.rmSync(base, { recursive: true, force: true }));
  const root = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(path.join(root, 'config'), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(root, 'server.properties'), PROPS);
  fs.writeFileSync(path.join(root, 'config', 'paper.yml'), 'paper: true\n');
  fs.writeFileSync(path.join(root, 'config', 'paper-global.yml'), SECRET_TEXT);
  fs.writeFileSync(path.join(outside, 'secret.txt'), OUTSIDE_TEXT);
  return {
    base,
    root,
    outside,
    p: (rel) => path.join(root, rel),
    // The ops' own tests see them as FELIS_TRASH=off does; job/trash/*.test.ts turn the trash on.
    run: (req, opts) => execute({ ...req, worldsRoot: root }, { trash: TRASH_OFF, ...opts }),
  };
}

/** The trash as FELIS_TRASH=off leaves it, and as it is on by default (seven days, an actor). */
export const TRASH_OFF: TrashSettings = Object.freeze({ enabled: false, seconds: DEFAULT_TRASH_SECONDS, actor: '' });
export const TRASH_ON: TrashSettings = Object.freeze({ enabled: true, seconds: DEFAULT_TRASH_SECONDS, actor: 'alice' });

export function sha256(b: Buffer | string): string {
  return createHash('sha256').update(b).digest('hex');
}

/** Every entry under `dir`, recursively, as relative paths (links not followed), sorted. */
export function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      // The withheld-file ledger every read-write Job keeps (withheld.ts): the editor's, not the world's.
      if (r === LEDGER_DIR) continue;
      out.push(e.isDirectory() ? `${r}/` : e.isSymbolicLink() ? `${r}@` : r);
      if (e.isDirectory()) walk(r);
    }
  };
  walk('');
  return out.sort();
}

/** A snapshot of a directory's files and their contents, to prove nothing changed. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of tree(dir)) {
    const full = path.join(dir, r.replace(/[/@]$/, ''));
    if (r.endsWith('@')) out[r] = fs.readlinkSync(full);
    else if (r.endsWith('/')) out[r] = 'dir';
    else out[r] = fs.readFileSync(full).toString('base64');
  }
  return out;
}

/** Open fds of this process. */
export function openFds(): number {
  return fs.readdirSync('/proc/self/fd').length;
}

export function content(r: Result): Buffer {
  return Buffer.from(r.content ?? '', 'base64');
}

export function writeReq(pathRel: string, data: string | Buffer, extra: Partial<OpRequestOf<'write'>> = {}): Omit<OpRequestOf<'write'>, 'worldsRoot'> {
  const b = Buffer.isBuffer(data) ? data : Buffer.from(data);
  return { op: 'write', path: pathRel, content: b, sha256: sha256(b), ...extra };
}

export function errnoError(code: string, message = code): NodeJS.ErrnoException {
  const e = new Error(`${code}: ${message}`) as NodeJS.ErrnoException;
  e.code = code;
  return e;
}

/**
 * What the crash tests share: the Job program (crash-child.test-kit.ts) run as a real child process that
 * writes down each durable step it reaches, so a test can run it again and kill it at any one.
 * Test-only.
 * @module
 */

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';

export const CRASH_CHILD = path.join(import.meta.dirname, 'crash-child.test-kit.ts');

export interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The durable steps the run reached, in order. */
  steps: string[];
}

/**
 * A scratch folder (removed after the tests) and a runner of `felis files` over a world in it,
 * with `env` over the process's own (FELIS_TEST_STOP_AT kills it at a step).
 */
export function crashKit(prefix: string, env: Record<string, string>): { base: string; child: (root: string, args: string[], more?: Record<string, string>) => Run } {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  after(() => fs.rmSync(base, { recursive: true, force: true }));
  let runs = 0;
  const child = (root: string, args: string[], more: Record<string, string> = {}): Run => {
    const stepsFile = path.join(base, `steps-${++runs}`);
    const r = spawnSync(process.execPath, [CRASH_CHILD, 'files', '--worlds-root', root, ...args], {
      env: { ...process.env, FELIS_TEST_STEPS: stepsFile, ...env, ...more },
      encoding: 'utf8',
      timeout: 60_000,
    });
    const steps = fs.existsSync(stepsFile) ? fs.readFileSync(stepsFile, 'utf8').split('\n').filter(Boolean) : [];
    return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, steps };
  };
  return { base, child };
}

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { OPENAPI_FILE, renderDocs } from './render.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
// The CLI's own entry, run by this Node: its bin's `#!/usr/bin/env node` may find an older one.
const CLI = join(root, 'node_modules/@redocly/cli/bin/cli.js');
/** Warnings let stand, each with why; any other is a failure, as is any error. */
const ACCEPTED_WARNINGS: Record<string, string> = {
  'info-license': 'the package is private and names no license: the document cannot claim one',
};

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string }[];
}

/** `redocly lint` (recommended rules) on `text`, offline: no telemetry, no update check, no config file but the ruleset. */
async function lint(text: string): Promise<{ errors: number; problems: Problem[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'redocly-lint-'));
  try {
    writeFileSync(join(dir, 'openapi.json'), text);
    const env = { PATH: process.env.PATH ?? '', HOME: dir, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    const args = [CLI, 'lint', 'openapi.json', '--extends=recommended', '--format=json', '--max-problems=1000'];
    // Exit code 1 on errors: the JSON on stdout says which.
    const out = await promisify(execFile)(process.execPath, args, { cwd: dir, env, maxBuffer: 64 << 20 }).catch((e: { stdout?: string; stderr?: string }) => {
      if (!e.stdout) throw new Error(`redocly lint gave no report: ${e.stderr}`);
      return { stdout: e.stdout };
    });
    const report = JSON.parse(out.stdout) as { totals: { errors: number }; problems: Problem[] };
    return { errors: report.totals.errors, problems: report.problems };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const show = (ps: Problem[]) => ps.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`).join('\n');

test('the OpenAPI document passes `redocly lint` with the recommended rules: no error, no warning but the accepted', { timeout: 60_000 }, async () => {
  const { errors, problems } = await lint(renderDocs(root)[OPENAPI_FILE]!);
  assert.equal(errors, 0, show(problems));
  const unaccepted = problems.filter((p) => !Object.hasOwn(ACCEPTED_WARNINGS, p.ruleId));
  assert.deepEqual(unaccepted, [], show(unaccepted));
});

/**
 * Test and bench helper (never shipped): extracts one archive in a process of its own and prints
 * `{result, maxRssMiB, ms}` as JSON, so the peak memory measured is the extraction's alone.
 * Usage: node functions/files-unzip/job/unzip-child.test-kit.ts <worlds-root> <archive path> [to]; FELIS_OP=zip packs instead.
 *
 * @module
 */
import fs from 'node:fs';
import { execute } from '../../../job/dispatch/execute.ts';

const [root, archive, to] = process.argv.slice(2);
const t0 = performance.now();
const result = await execute({ op: process.env.FELIS_OP === 'zip' ? 'zip' : 'unzip', path: archive, worldsRoot: root, to, overwrite: false });
const ms = performance.now() - t0;
// VmHWM, not getrusage's maxRSS: Linux keeps maxRSS across execve, so it would report the
// spawning parent's size; the high-water mark of this process's own memory starts fresh.
const hwmKiB = Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN);
process.stdout.write(JSON.stringify({ result, maxRssMiB: hwmKiB / 1024, ms }) + '\n');

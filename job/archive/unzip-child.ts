/**
 * Test and bench helper (never shipped): extracts one archive in a process of its own and prints
 * `{result, maxRssMiB, ms}` as JSON, so the peak memory measured is the extraction's alone.
 * Usage: node job/archive/unzip-child.ts <worlds-root> <archive path> [to]
 *
 * @module
 */
import { execute } from '../execute.ts';

const [root, archive, to] = process.argv.slice(2);
const t0 = performance.now();
const result = await execute({ op: process.env.FELIS_OP ?? 'unzip', path: archive, worldsRoot: root, to, overwrite: false });
const ms = performance.now() - t0;
process.stdout.write(JSON.stringify({ result, maxRssMiB: process.resourceUsage().maxRSS / 1024, ms }) + '\n');

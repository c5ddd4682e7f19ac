// Prints its arguments and a few environment variables, one per line, for the kubelet tests.
import { readFileSync } from 'node:fs';
for (const a of process.argv.slice(2)) console.log(`arg ${a}`);
for (const k of ['WORLD', 'POD_NAME', 'GREETING']) if (process.env[k] !== undefined) console.log(`env ${k}=${process.env[k]}`);
console.log(`cwd ${process.cwd()}`);
const file = process.argv[2];
if (file) console.log(`read ${readFileSync(file, 'utf8').trim()}`);

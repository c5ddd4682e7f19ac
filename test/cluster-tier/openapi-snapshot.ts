/**
 * Writes cluster/testdata/openapi-v2-v1.20.json, the OpenAPI definitions the embedded cluster
 * serves at /openapi/v2 (cluster/openapi.ts), from the cluster tier's real v1.20 apiserver:
 *
 *   FELIS_K8S_BIN=<bin> bash test/cluster-tier/control-plane/up.sh <workdir>
 *   node_modules/.bin/node test/cluster-tier/openapi-snapshot.ts <workdir>/env
 *   bash test/cluster-tier/control-plane/down.sh <workdir>
 *
 * Only the definitions the served kinds reach (`trimDefinitions` over `OPENAPI_ROOTS`), one per line.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPENAPI_ROOTS, trimDefinitions } from '../../cluster/openapi.ts';
import { AdminClient, readControlPlaneEnv } from '../../cluster/real/admin.ts';

const env = readControlPlaneEnv(process.argv[2] ?? '');
const admin = new AdminClient(env.K8S_URL, env.ADMIN_TOKEN);
const doc = (await admin.must('GET', '/openapi/v2')).body as { info: { version: string }; definitions: Record<string, unknown> };
await admin.close();
const defs = trimDefinitions(doc.definitions, OPENAPI_ROOTS);
const lines = Object.entries(defs).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
const out = join(import.meta.dirname, '..', '..', 'cluster', 'testdata', 'openapi-v2-v1.20.json');
writeFileSync(out, `{\n${lines.join(',\n')}\n}\n`);
console.log(`${out}: ${lines.length} definitions from ${doc.info.version}`);

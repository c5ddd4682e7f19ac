/**
 * Applies manifests to the cluster tier's control plane with the admin token (create, or replace
 * when present), waiting for a CRD to be Established and served.
 *
 *   node test/cluster-tier/apply.ts <workdir>/env knative/components/crd/crd.yaml knative/rbac.yaml …
 */
import { readFileSync } from 'node:fs';
import { AdminClient, applyManifest, readControlPlaneEnv } from '../../cluster/real/admin.ts';

const [envFile, ...files] = process.argv.slice(2);
if (!envFile || files.length === 0) {
  console.error('usage: node test/cluster-tier/apply.ts <workdir>/env <manifest.yaml>...');
  process.exit(2);
}
const env = readControlPlaneEnv(envFile);
const admin = new AdminClient(env.K8S_URL, env.ADMIN_TOKEN);
try {
  for (const f of files) {
    const applied = await applyManifest(admin, readFileSync(f, 'utf8'));
    console.error(`[apply] ${f}: ${applied.join(', ')}`);
  }
} finally {
  await admin.close();
}

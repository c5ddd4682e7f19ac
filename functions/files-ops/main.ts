/** Entry of the files-ops Knative service (bundled to dist/functions/files-ops.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-ops', async () => (await import('./app.ts')).filesOps);

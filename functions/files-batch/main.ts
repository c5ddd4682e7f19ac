/** Entry of the files-batch Knative service (bundled to dist/functions/files-batch.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-batch', async () => (await import('./app.ts')).filesBatch);

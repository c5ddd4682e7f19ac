/** Entry of the files-pull Knative service (bundled to dist/functions/files-pull.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-pull', async () => (await import('./app.ts')).filesPull);

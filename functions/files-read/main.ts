/** Entry of the files-read Knative service (bundled to dist/functions/files-read.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-read', async () => (await import('./app.ts')).filesRead);

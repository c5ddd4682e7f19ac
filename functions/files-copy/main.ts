/** Entry of the files-copy Knative service (bundled to dist/functions/files-copy.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-copy', async () => (await import('./app.ts')).filesCopy);

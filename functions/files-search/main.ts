/** Entry of the files-search Knative service (bundled to dist/functions/files-search.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-search', async () => (await import('./app.ts')).filesSearch);

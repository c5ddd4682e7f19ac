/** Entry of the files-list Knative service (bundled to dist/functions/files-list.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-list', async () => (await import('./app.ts')).filesList);

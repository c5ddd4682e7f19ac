/** Entry of the files-delete Knative service (bundled to dist/functions/files-delete.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-delete', async () => (await import('./app.ts')).filesDelete);

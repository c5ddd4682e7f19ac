/** Entry of the files-trash Knative service (bundled to dist/functions/files-trash.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-trash', async () => (await import('./app.ts')).filesTrash);

/** Entry of the files-uploads Knative service (bundled to dist/functions/files-uploads.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-uploads', async () => (await import('./app.ts')).filesUploads);

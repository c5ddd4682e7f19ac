/** Entry of the files-upload Knative service (bundled to dist/functions/files-upload.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-upload', async () => (await import('./app.ts')).filesUpload);

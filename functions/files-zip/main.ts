/** Entry of the files-zip Knative service (bundled to dist/functions/files-zip.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-zip', async () => (await import('./app.ts')).filesZip);

/** Entry of the files-download Knative service (bundled to dist/functions/files-download.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-download', async () => (await import('./app.ts')).filesDownload);

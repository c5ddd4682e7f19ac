/** Entry of the files-unzip Knative service (bundled to dist/functions/files-unzip.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-unzip', async () => (await import('./app.ts')).filesUnzip);

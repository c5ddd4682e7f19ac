/** Entry of the files-mkdir Knative service (bundled to dist/functions/files-mkdir.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-mkdir', async () => (await import('./app.ts')).filesMkdir);

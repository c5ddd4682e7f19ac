/** Entry of the files-compress Knative service (bundled to dist/functions/files-compress.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-compress', async () => (await import('./app.ts')).filesCompress);

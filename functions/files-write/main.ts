/** Entry of the files-write Knative service (bundled to dist/functions/files-write.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-write', async () => (await import('./app.ts')).filesWrite);

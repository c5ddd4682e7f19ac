/** Entry of the start Knative service (bundled to dist/functions/start.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('start', async () => (await import('./app.ts')).startRoutes);

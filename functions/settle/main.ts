/** Entry of the settle Knative service (bundled to dist/functions/settle.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('settle', async () => (await import('./app.ts')).settleRoutes);

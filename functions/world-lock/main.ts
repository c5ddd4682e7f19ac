/** Entry of the world-lock Knative service (bundled to dist/functions/world-lock.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('world-lock', async () => (await import('./app.ts')).worldLockRoutes);

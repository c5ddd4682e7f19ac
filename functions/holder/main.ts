/** Entry of the holder Knative service (bundled to dist/functions/holder.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('holder', async () => (await import('./app.ts')).holderRoutes);

/** Entry of the world-lock Knative service (bundled to dist/functions/world-lock.mjs). */
import { serveFunction } from '../../lib/http/serve.ts';
import { worldLockRoutes } from './app.ts';

serveFunction('world-lock', worldLockRoutes);

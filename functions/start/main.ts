/** Entry of the start Knative service (bundled to dist/functions/start.mjs). */
import { serveFunction } from '../../lib/http/serve.ts';
import { startRoutes } from './app.ts';

serveFunction('start', startRoutes);

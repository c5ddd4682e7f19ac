/** Entry of the settle Knative service (bundled to dist/functions/settle.mjs). */
import { serveFunction } from '../../lib/http/serve.ts';
import { settleRoutes } from './app.ts';

serveFunction('settle', settleRoutes);

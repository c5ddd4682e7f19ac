/** Entry of the holder Knative service (bundled to dist/functions/holder.mjs). */
import { serveFunction } from '../../lib/http/serve.ts';
import { holderRoutes } from './app.ts';

serveFunction('holder', holderRoutes);

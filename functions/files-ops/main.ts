/** Entry of the files-ops Knative service (bundled to dist/functions/files-ops.mjs). */
import { serveFunction } from '../../lib/http/serve.ts';
import { filesOps } from './app.ts';

serveFunction('files-ops', filesOps);

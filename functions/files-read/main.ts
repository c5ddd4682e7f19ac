/** Entry of the files-read Knative service (bundled to dist/functions/files-read.mjs). */
import { serveFunction } from '../../lib/http/serve.ts';
import { filesRead } from './app.ts';

serveFunction('files-read', filesRead);

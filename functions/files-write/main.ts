/** Entry of the files-write Knative service (bundled to dist/functions/files-write.mjs). */
import { serveFunction } from '../../lib/http/serve.ts';
import { filesWrite } from './app.ts';

serveFunction('files-write', filesWrite);

/** Entry of the files-delete Knative service (bundled to dist/functions/files-delete.mjs). */
import { serveFunction } from '../../lib/http/serve.ts';
import { filesDelete } from './app.ts';

serveFunction('files-delete', filesDelete);

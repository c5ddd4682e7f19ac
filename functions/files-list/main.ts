/** Entry of the files-list Knative service (bundled to dist/functions/files-list.mjs). */
import { serveFunction } from '../../lib/http/serve.ts';
import { filesList } from './app.ts';

serveFunction('files-list', filesList);

/** Entry of the files-mkdir Knative service (bundled to dist/functions/files-mkdir.mjs). */
import { serveFunction } from '../../lib/http/serve.ts';
import { filesMkdir } from './app.ts';

serveFunction('files-mkdir', filesMkdir);

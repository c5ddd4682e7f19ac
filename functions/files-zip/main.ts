/** Entry of the files-zip Knative service (bundled to dist/functions/files-zip.mjs). */
import { serveFunction } from '../../lib/http/serve.ts';
import { filesZip } from './app.ts';

serveFunction('files-zip', filesZip);

/** Entry of the files-unzip Knative service (bundled to dist/functions/files-unzip.mjs). */
import { serveFunction } from '../../lib/http/serve.ts';
import { filesUnzip } from './app.ts';

serveFunction('files-unzip', filesUnzip);

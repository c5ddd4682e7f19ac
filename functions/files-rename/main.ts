/** Entry of the files-rename Knative service (bundled to dist/functions/files-rename.mjs). */
import { serveFunction } from '../../lib/http/serve.ts';
import { filesRename } from './app.ts';

serveFunction('files-rename', filesRename);

/** Entry of the files-rename Knative service (bundled to dist/functions/files-rename.mjs); its routes load after it listens. */
import { serveFunction } from '../../lib/http/serve.ts';

serveFunction('files-rename', async () => (await import('./app.ts')).filesRename);

/**
 * Every function's routes, for hosts that serve them together (`npm start`, the tests), as an
 * ingress in front of the separate Knative services would.
 * @module
 */
import type { RouteModule } from '../lib/http/serve.ts';
import { filesBatch } from './files-batch/app.ts';
import { filesCompress } from './files-compress/app.ts';
import { filesCopy } from './files-copy/app.ts';
import { filesDelete } from './files-delete/app.ts';
import { filesDownload } from './files-download/app.ts';
import { filesList } from './files-list/app.ts';
import { filesMkdir } from './files-mkdir/app.ts';
import { filesOps } from './files-ops/app.ts';
import { filesPull } from './files-pull/app.ts';
import { filesRead } from './files-read/app.ts';
import { filesRename } from './files-rename/app.ts';
import { filesSearch } from './files-search/app.ts';
import { filesTrash } from './files-trash/app.ts';
import { filesUnzip } from './files-unzip/app.ts';
import { filesUpload } from './files-upload/app.ts';
import { filesUploads } from './files-uploads/app.ts';
import { filesWrite } from './files-write/app.ts';
import { filesZip } from './files-zip/app.ts';
import { holderRoutes } from './holder/app.ts';
import { settleRoutes } from './settle/app.ts';
import { startRoutes } from './start/app.ts';
import { worldLockRoutes } from './world-lock/app.ts';

export const FUNCTIONS: Record<string, RouteModule> = {
  'files-list': filesList,
  'files-search': filesSearch,
  'files-read': filesRead,
  'files-write': filesWrite,
  'files-mkdir': filesMkdir,
  'files-delete': filesDelete,
  'files-rename': filesRename,
  'files-batch': filesBatch,
  'files-unzip': filesUnzip,
  'files-zip': filesZip,
  'files-compress': filesCompress,
  'files-copy': filesCopy,
  'files-pull': filesPull,
  'files-upload': filesUpload,
  'files-uploads': filesUploads,
  'files-trash': filesTrash,
  'files-ops': filesOps,
  'files-download': filesDownload,
  holder: holderRoutes,
  start: startRoutes,
  'world-lock': worldLockRoutes,
  settle: settleRoutes,
};

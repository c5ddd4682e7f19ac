/**
 * Every HTTP route of every function, collected: method, path, the function that serves it, the
 * permission it needs, the envelope codes it can answer and the CloudEvent type that carries it,
 * and its prose. Each function declares its own in functions/<fn>/routes.ts (and their zod
 * schemas in schemas.ts beside it, which schemas.ts here collects), under the same route ids; this
 * module puts them together in this order, the order of the OpenAPI document and of the README
 * summary. The Hono registration (register.ts), the permission map (lib/auth/actions.ts), the event
 * types (lib/http/event-entry.ts), the OpenAPI document and the README summary are derived from
 * it. Adding a route to a function is its entry and prose in the function's routes.ts, its schemas
 * in its schemas.ts and its handler in its app.ts; a new function's routes are one import and one
 * line here and in schemas.ts.
 *
 * No validation library here: the serving shell reads this before a woken service answers its
 * first probe.
 * @module
 */

import * as filesBatch from '../../../functions/files-batch/routes.ts';
import * as filesCompress from '../../../functions/files-compress/routes.ts';
import * as filesCopy from '../../../functions/files-copy/routes.ts';
import * as filesDelete from '../../../functions/files-delete/routes.ts';
import * as filesDownload from '../../../functions/files-download/routes.ts';
import * as filesList from '../../../functions/files-list/routes.ts';
import * as filesMkdir from '../../../functions/files-mkdir/routes.ts';
import * as filesOps from '../../../functions/files-ops/routes.ts';
import * as filesPull from '../../../functions/files-pull/routes.ts';
import * as filesRead from '../../../functions/files-read/routes.ts';
import * as filesRename from '../../../functions/files-rename/routes.ts';
import * as filesSearch from '../../../functions/files-search/routes.ts';
import * as filesTrash from '../../../functions/files-trash/routes.ts';
import * as filesUnzip from '../../../functions/files-unzip/routes.ts';
import * as filesUpload from '../../../functions/files-upload/routes.ts';
import * as filesUploads from '../../../functions/files-uploads/routes.ts';
import * as filesWrite from '../../../functions/files-write/routes.ts';
import * as filesZip from '../../../functions/files-zip/routes.ts';
import * as holder from '../../../functions/holder/routes.ts';
import * as settle from '../../../functions/settle/routes.ts';
import * as start from '../../../functions/start/routes.ts';
import * as worldLock from '../../../functions/world-lock/routes.ts';
import type { ProseTable, RouteTable } from './types.ts';

export const ROUTES = {
  ...filesList.routes,
  ...filesSearch.routes,
  ...filesRead.routes,
  ...filesWrite.routes,
  ...filesMkdir.routes,
  ...filesDelete.routes,
  ...filesRename.routes,
  ...filesBatch.routes,
  ...filesUnzip.routes,
  ...filesZip.routes,
  ...filesPull.routes,
  ...filesCompress.routes,
  ...filesCopy.routes,
  ...filesUpload.routes,
  ...filesUploads.routes,
  ...filesTrash.routes,
  ...filesOps.routes,
  ...filesDownload.routes,
  ...holder.routes,
  ...start.routes,
  ...worldLock.routes,
  ...settle.routes,
} as const satisfies RouteTable;

export type RouteId = keyof typeof ROUTES;

/**
 * The routes' prose, by route id: the one-line summary of the OpenAPI document and the words on a
 * success of the README's route summary. Only the document generators (`npm run openapi`, the
 * freshness test) read it, so it is marked pure: a function bundle drops it, and its size is on
 * neither a woken service's start-up path nor its bundle. Each function's routes.ts checks its own
 * prose is complete; the table test checks every function's is collected here.
 */
export const ROUTE_PROSE: ProseTable<typeof ROUTES> = /* @__PURE__ */ Object.assign(
  {},
  filesList.prose,
  filesSearch.prose,
  filesRead.prose,
  filesWrite.prose,
  filesMkdir.prose,
  filesDelete.prose,
  filesRename.prose,
  filesBatch.prose,
  filesUnzip.prose,
  filesZip.prose,
  filesPull.prose,
  filesCompress.prose,
  filesCopy.prose,
  filesUpload.prose,
  filesUploads.prose,
  filesTrash.prose,
  filesOps.prose,
  filesDownload.prose,
  holder.prose,
  start.prose,
  worldLock.prose,
  settle.prose,
);

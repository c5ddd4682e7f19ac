/**
 * Every HTTP route of every function, collected: method, path, the function that serves it, the
 * permission it needs, the envelope codes it can answer and the CloudEvent type that carries it.
 * Each function declares its own in functions/<fn>/routes.ts (its zod schemas in schemas.ts
 * beside it, collected by schemas.ts here; its prose collected by prose.ts), under the same route
 * ids; this module puts them together, in this order, which is the order of the OpenAPI document
 * and of the README summary. The Hono registration (register.ts), the permission map
 * (lib/auth/actions.ts), the event types (lib/http/event-entry.ts), the OpenAPI document and the
 * README summary are derived from it. Adding a route is its entry, prose and schemas in its
 * function's routes.ts and schemas.ts and its handler in the function's app.ts; a new function's
 * routes are added to the three collectors.
 *
 * No validation library here: the serving shell reads this before a woken service answers its
 * first probe.
 * @module
 */

import { routes as filesBatch } from '../../../functions/files-batch/routes.ts';
import { routes as filesCompress } from '../../../functions/files-compress/routes.ts';
import { routes as filesCopy } from '../../../functions/files-copy/routes.ts';
import { routes as filesDelete } from '../../../functions/files-delete/routes.ts';
import { routes as filesDownload } from '../../../functions/files-download/routes.ts';
import { routes as filesList } from '../../../functions/files-list/routes.ts';
import { routes as filesMkdir } from '../../../functions/files-mkdir/routes.ts';
import { routes as filesOps } from '../../../functions/files-ops/routes.ts';
import { routes as filesPull } from '../../../functions/files-pull/routes.ts';
import { routes as filesRead } from '../../../functions/files-read/routes.ts';
import { routes as filesRename } from '../../../functions/files-rename/routes.ts';
import { routes as filesSearch } from '../../../functions/files-search/routes.ts';
import { routes as filesTrash } from '../../../functions/files-trash/routes.ts';
import { routes as filesUnzip } from '../../../functions/files-unzip/routes.ts';
import { routes as filesUpload } from '../../../functions/files-upload/routes.ts';
import { routes as filesUploads } from '../../../functions/files-uploads/routes.ts';
import { routes as filesWrite } from '../../../functions/files-write/routes.ts';
import { routes as filesZip } from '../../../functions/files-zip/routes.ts';
import { routes as holder } from '../../../functions/holder/routes.ts';
import { routes as settle } from '../../../functions/settle/routes.ts';
import { routes as start } from '../../../functions/start/routes.ts';
import { routes as worldLock } from '../../../functions/world-lock/routes.ts';
import type { RouteTable } from './types.ts';

export const ROUTES = {
  ...filesList,
  ...filesSearch,
  ...filesRead,
  ...filesWrite,
  ...filesMkdir,
  ...filesDelete,
  ...filesRename,
  ...filesBatch,
  ...filesUnzip,
  ...filesZip,
  ...filesPull,
  ...filesCompress,
  ...filesCopy,
  ...filesUpload,
  ...filesUploads,
  ...filesTrash,
  ...filesOps,
  ...filesDownload,
  ...holder,
  ...start,
  ...worldLock,
  ...settle,
} as const satisfies RouteTable;

export type RouteId = keyof typeof ROUTES;

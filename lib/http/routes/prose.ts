/**
 * The routes' prose, by route id: the one-line summary of the OpenAPI document and the words on a
 * success of the README's route summary, collected from each function's routes.ts in the table's
 * order. Collected apart from the route table because only the document generators (`npm run
 * openapi`, the freshness test) read it: no function bundle keeps it (plain data the bundler drops
 * unused), so its size is on neither a woken service's start-up path nor its bundle.
 * @module
 */

import { prose as filesBatch } from '../../../functions/files-batch/routes.ts';
import { prose as filesCompress } from '../../../functions/files-compress/routes.ts';
import { prose as filesCopy } from '../../../functions/files-copy/routes.ts';
import { prose as filesDelete } from '../../../functions/files-delete/routes.ts';
import { prose as filesDownload } from '../../../functions/files-download/routes.ts';
import { prose as filesList } from '../../../functions/files-list/routes.ts';
import { prose as filesMkdir } from '../../../functions/files-mkdir/routes.ts';
import { prose as filesOps } from '../../../functions/files-ops/routes.ts';
import { prose as filesPull } from '../../../functions/files-pull/routes.ts';
import { prose as filesRead } from '../../../functions/files-read/routes.ts';
import { prose as filesRename } from '../../../functions/files-rename/routes.ts';
import { prose as filesSearch } from '../../../functions/files-search/routes.ts';
import { prose as filesTrash } from '../../../functions/files-trash/routes.ts';
import { prose as filesUnzip } from '../../../functions/files-unzip/routes.ts';
import { prose as filesUpload } from '../../../functions/files-upload/routes.ts';
import { prose as filesUploads } from '../../../functions/files-uploads/routes.ts';
import { prose as filesWrite } from '../../../functions/files-write/routes.ts';
import { prose as filesZip } from '../../../functions/files-zip/routes.ts';
import { prose as holder } from '../../../functions/holder/routes.ts';
import { prose as settle } from '../../../functions/settle/routes.ts';
import { prose as start } from '../../../functions/start/routes.ts';
import { prose as worldLock } from '../../../functions/world-lock/routes.ts';
import type { ROUTES } from './table.ts';
import type { ProseTable } from './types.ts';

export const ROUTE_PROSE = {
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
} satisfies ProseTable<typeof ROUTES>;

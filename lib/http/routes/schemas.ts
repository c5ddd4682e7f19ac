/**
 * The zod schemas of every route in table.ts, under the same ids, collected from each function's
 * schemas.ts (shared pieces in common-schemas.ts): its query, its body, and each
 * success answer as the handler sends it. The query and body schemas are what lib/http parses
 * (register.ts); the answers are what the OpenAPI document promises, so they describe what the
 * handlers really send: nullable where it can be null, optional where it can be absent, and
 * strict only where the handler builds the whole object itself.
 * @module
 */

import { schemas as filesBatch } from '../../../functions/files-batch/schemas.ts';
import { schemas as filesCompress } from '../../../functions/files-compress/schemas.ts';
import { schemas as filesCopy } from '../../../functions/files-copy/schemas.ts';
import { schemas as filesDelete } from '../../../functions/files-delete/schemas.ts';
import { schemas as filesDownload } from '../../../functions/files-download/schemas.ts';
import { schemas as filesList } from '../../../functions/files-list/schemas.ts';
import { schemas as filesMkdir } from '../../../functions/files-mkdir/schemas.ts';
import { schemas as filesOps } from '../../../functions/files-ops/schemas.ts';
import { schemas as filesPull } from '../../../functions/files-pull/schemas.ts';
import { schemas as filesRead } from '../../../functions/files-read/schemas.ts';
import { schemas as filesRename } from '../../../functions/files-rename/schemas.ts';
import { schemas as filesSearch } from '../../../functions/files-search/schemas.ts';
import { schemas as filesTrash } from '../../../functions/files-trash/schemas.ts';
import { schemas as filesUnzip } from '../../../functions/files-unzip/schemas.ts';
import { schemas as filesUpload } from '../../../functions/files-upload/schemas.ts';
import { schemas as filesUploads } from '../../../functions/files-uploads/schemas.ts';
import { schemas as filesWrite } from '../../../functions/files-write/schemas.ts';
import { schemas as filesZip } from '../../../functions/files-zip/schemas.ts';
import { schemas as holder } from '../../../functions/holder/schemas.ts';
import { schemas as settle } from '../../../functions/settle/schemas.ts';
import { schemas as start } from '../../../functions/start/schemas.ts';
import { schemas as worldLock } from '../../../functions/world-lock/schemas.ts';
import type { ROUTES } from './table.ts';
import type { SchemaTable } from './types.ts';

export const SCHEMAS = {
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
} as const satisfies SchemaTable<typeof ROUTES>;

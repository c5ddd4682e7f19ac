/**
 * The export Job of a download, in Felis's shape so that Felis (and our own holder rule) sees it
 * as an `export` holder while it runs: the name `export-<server>-<16 hex>`, the labels
 * managed-by `felis-export`, component `world-export`, the server and export-mode `files` on the
 * Job and its Pods, Felis's command line (`felis export --mode files --server S --worlds-root R
 * --path P [--dir]`), the world mounted read-only, no API token. One extension: instead of a
 * `--target-url` to push to, the program serves the download on the Pod address (port 8420) to
 * the function, to the bearer of a token whose SHA-256 alone is in the spec. Pure.
 * @module
 */
import type { V1Job } from '@kubernetes/client-node';
import { LABEL_COMPONENT, LABEL_EXPORT_MODE, LABEL_MANAGED_BY, LABEL_SERVER } from '../labels.ts';
import { ARCHIVE_NODE_OPTIONS, BROWSE_PORT, type JobBase, JobSpecError, jobOf, listenEnvOf } from './render.ts';
import { ASYNC_DEADLINE_SECONDS, DEFAULT_CPU, DEFAULT_MEMORY } from './resources.ts';

export const MANAGED_BY_EXPORT = 'felis-export';
export const COMPONENT_WORLD_EXPORT = 'world-export';
/** Ours only: the id in the Job's name, by which the function finds the Job's Pod. */
export const LABEL_EXPORT_ID = 'felis.lolicon.best/export-id';
/** The port the export program serves on (the same container port as a browse Job's). */
export const EXPORT_PORT = BROWSE_PORT;

export interface ExportJobParams extends Omit<JobBase, 'opId'> {
  /** 16 lowercase hex characters. */
  exportId: string;
  path: string;
  dir: boolean;
  /** Hex SHA-256 of the token the function presents. */
  tokenSha256: string;
  /** The program stops when nobody claims the download for this long. */
  idleSeconds: number;
  /** The Job's deadline: the longest a download may take (default 2 h). */
  deadlineSeconds?: number;
  cpu?: string;
  memory?: string;
}

export function exportJobName(server: string, exportId: string): string {
  return `export-${server}-${exportId}`;
}

/** Felis's export command from the file Job's (`/usr/local/bin/felis files` → `... export`). */
export function exportCommand(filesCommand: string[]): string[] {
  return filesCommand.length > 0 && filesCommand[filesCommand.length - 1] === 'files' ? [...filesCommand.slice(0, -1), 'export'] : [...filesCommand, 'export'];
}

/** Where a folder download's packer spills the zip's central directory (about 100 bytes a file). */
export const EXPORT_SCRATCH_PATH = '/scratch';
/** Room for the central directory of a few million files. */
export const EXPORT_SCRATCH_LIMIT = '1Gi';

export function renderExportJob(p: ExportJobParams): V1Job {
  if (!p.image) throw new JobSpecError('no worker image configured');
  if (!p.worldPvc) throw new JobSpecError('no world volume claim');
  if (!/^[0-9a-f]{16}$/.test(p.exportId)) throw new JobSpecError('an export job needs a 16-hex id');
  if (!/^[0-9a-f]{64}$/.test(p.tokenSha256)) throw new JobSpecError('an export job needs a token digest');
  if (p.path === '') throw new JobSpecError('an export job needs a path');
  if (p.command.length === 0) throw new JobSpecError('no worker command configured');
  const cpu = p.cpu || DEFAULT_CPU;
  const memory = p.memory || DEFAULT_MEMORY;
  const labels: Record<string, string> = {
    [LABEL_MANAGED_BY]: MANAGED_BY_EXPORT,
    [LABEL_COMPONENT]: COMPONENT_WORLD_EXPORT,
    [LABEL_SERVER]: p.server,
    [LABEL_EXPORT_MODE]: 'files',
    [LABEL_EXPORT_ID]: p.exportId,
  };
  const job = jobOf(
    { ...p, opId: p.exportId },
    {
      labels,
      deadlineSeconds: p.deadlineSeconds ?? ASYNC_DEADLINE_SECONDS,
      readOnly: true,
      args: ['--mode', 'files', '--server', p.server, '--worlds-root', p.worldsRoot, '--path', p.path, ...(p.dir ? ['--dir'] : [])],
      env: [
        ...listenEnvOf(EXPORT_PORT),
        { name: 'FELIS_EXPORT_TOKEN_SHA256', value: p.tokenSha256 },
        { name: 'FELIS_EXPORT_IDLE_SECONDS', value: String(p.idleSeconds) },
        // A folder is packed: the zip's central directory waits in the scratch folder, not in
        // memory, and the heap is held to the container as the archive Jobs' is.
        ...(p.dir
          ? [
              { name: 'FELIS_SCRATCH_DIR', value: EXPORT_SCRATCH_PATH },
              { name: 'NODE_OPTIONS', value: ARCHIVE_NODE_OPTIONS },
            ]
          : []),
      ],
      ...(p.dir ? { scratch: { mountPath: EXPORT_SCRATCH_PATH, sizeLimit: EXPORT_SCRATCH_LIMIT } } : {}),
      ports: [{ name: 'serve', containerPort: EXPORT_PORT, protocol: 'TCP' }],
      requests: { cpu, memory },
      limits: { cpu, memory },
      // It only reads: as the game's uid, with no capability.
      capabilities: [],
    },
  );
  job.metadata!.name = exportJobName(p.server, p.exportId);
  return job;
}

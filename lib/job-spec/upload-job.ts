/**
 * The receiver Job of an upload: the file Job program in `--receive` mode, world mounted
 * read-write, with the receive label by which the function finds its Pod.
 *
 * - The single PUT's receiver is labelled as an `upload` file Job, so it holds the world as
 *   `file-write` for us and for Felis (whose rule counts any files-mode but `read` as a write) for
 *   as long as it runs, as any one-shot change does; it is marked as a change of ours.
 * - A session's receiver holds nothing by itself (docs/uploads.md): `files-mode: read`, the one
 *   shape both holder rules count as no holder, as an edit session is, and its own label naming the
 *   session. It changes the world only inside a call made by a function holding a ticket of the
 *   world's line, which carries that lock (job/serve/receive-session.ts checks it), so it is no
 *   change of ours for the line to wait on either. It is also a background op (`files-async`, its
 *   path annotated): our ops listing shows it as the `upload` it is (lib/ops/state.ts).
 *
 * Pure: no I/O.
 * @module
 */
import type { V1Job } from '@kubernetes/client-node';
import {
  ANNOTATION_FILES_PATH,
  CHANGE_MARK,
  COMPONENT_WORLD_FILES,
  LABEL_COMPONENT,
  LABEL_FILES_ASYNC,
  LABEL_FILES_MODE,
  LABEL_FILES_OP,
  LABEL_MANAGED_BY,
  LABEL_SERVER,
  MANAGED_BY_FILES,
} from '../labels.ts';
import { encodeTrashEnv } from '../protocol/trash-env.ts';
import { BROWSE_PORT, type JobBase, type JobParams, JobSpecError, jobOf, quantity, servingEnvOf } from './render.ts';
import { DEFAULT_CPU, DEFAULT_MEMORY } from './resources.ts';

/** Ours only: marks a file Job that receives uploads on its Pod address. */
export const LABEL_FILES_RECEIVE = 'felis.lolicon.best/files-receive';
export { LABEL_UPLOAD_SESSION } from '../labels.ts';

import { LABEL_UPLOAD_SESSION } from '../labels.ts';
/** The same container port as a serving Job: only the upload functions may reach it. */
export const RECEIVE_PORT = BROWSE_PORT;

export interface ReceiverJobParams extends JobBase, Pick<JobParams, 'cpu' | 'memory' | 'trash'> {
  /** Hex SHA-256 of the token the function presents; the token itself never appears in the spec. */
  tokenSha256: string;
  /** Stop after the first upload (the single PUT). */
  once: boolean;
  /** Serve this upload session instead (resumed from the disk when it exists there). */
  session?: string;
  /** A session's file (its ops listing entry and holder message name it); '' when not known. */
  path?: string;
  idleSeconds: number;
  lifetimeSeconds: number;
}

export function renderReceiverJob(p: ReceiverJobParams): V1Job {
  if (!p.image) throw new JobSpecError('no worker image configured');
  if (!p.worldPvc) throw new JobSpecError('no world volume claim');
  if (!p.opId) throw new JobSpecError('no operation id');
  if (!/^[0-9a-f]{64}$/.test(p.tokenSha256)) throw new JobSpecError('a receiver job needs a token digest');
  if (p.command.length === 0) throw new JobSpecError('no worker command configured');
  if (p.session !== undefined && (p.once || !/^[0-9a-f]{32}$/.test(p.session))) throw new JobSpecError('a session receiver needs a 32-hex session id');
  const cpu = quantity(p.cpu, DEFAULT_CPU, 'cpu');
  const memory = quantity(p.memory, DEFAULT_MEMORY, 'memory');
  const labels: Record<string, string> = {
    [LABEL_MANAGED_BY]: MANAGED_BY_FILES,
    [LABEL_COMPONENT]: COMPONENT_WORLD_FILES,
    [LABEL_SERVER]: p.server,
    [LABEL_FILES_OP]: p.opId,
    // A session's receiver holds nothing by itself; the single PUT's holds the world while it runs.
    [LABEL_FILES_MODE]: p.session ? 'read' : 'upload',
    [LABEL_FILES_RECEIVE]: 'true',
  };
  if (p.session) {
    labels[LABEL_UPLOAD_SESSION] = p.session;
    labels[LABEL_FILES_ASYNC] = 'true';
  }
  return jobOf(p, {
    labels,
    // A session's path, as on Felis's background Jobs; the single PUT's Job (a sync one) is instead
    // a change of ours that a later change waits for in turn (lib/maintenance/world-line.ts).
    annotations: p.session ? { [ANNOTATION_FILES_PATH]: p.path ?? '' } : { ...CHANGE_MARK },
    // A minute past the program's own lifetime for a clean stop.
    deadlineSeconds: p.lifetimeSeconds + 60,
    readOnly: false,
    args: ['--receive', '--worlds-root', p.worldsRoot],
    env: [
      ...servingEnvOf(RECEIVE_PORT, p),
      ...(p.once ? [{ name: 'FELIS_RECEIVE_ONCE', value: 'true' }] : []),
      ...(p.session ? [{ name: 'FELIS_UPLOAD_SESSION', value: p.session }] : []),
      // An upload placed over an existing file puts the old one in the undo trash: told how, and by whom.
      ...(p.trash ? encodeTrashEnv(p.trash) : []),
    ],
    ports: [{ name: 'receive', containerPort: RECEIVE_PORT, protocol: 'TCP' }],
    requests: { cpu, memory },
    limits: { cpu, memory },
    capabilities: ['CHOWN', 'DAC_OVERRIDE'],
  });
}
